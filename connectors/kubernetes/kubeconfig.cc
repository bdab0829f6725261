#include "connectors/kubernetes/kubeconfig.h"

#include "controller/common/base64.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpufed::connectors::kubernetes {
namespace {

namespace fs = std::filesystem;

std::string Resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || fs::path(path).is_absolute() || base_dir.empty()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

// Finds the entry named `name` in a kubeconfig list (clusters, users, contexts) and
// returns its `field` member (cluster, user, context).
Result<YAML::Node> Named(const YAML::Node& root, const char* list, const char* field, const std::string& name) {
  const YAML::Node items = root[list];
  if (items && items.IsSequence()) {
    for (const YAML::Node& item : items) {
      if (item["name"] && item["name"].as<std::string>() == name) {
        YAML::Node value = item[field];
        if (!value || !value.IsMap()) return InvalidArgument(std::string(list) + " entry " + name + " has no " + field);
        return value;
      }
    }
  }
  return InvalidArgument(std::string("no ") + field + " named \"" + name + "\" in " + list);
}

std::string Str(const YAML::Node& map, const char* key) {
  const YAML::Node v = map[key];
  return v && v.IsScalar() ? v.as<std::string>() : "";
}

Result<http::PemSource> Pem(const YAML::Node& map, const char* file_key, const std::string& data_key,
                            const std::string& base_dir) {
  http::PemSource out;
  std::string data = Str(map, data_key.c_str());
  if (!data.empty()) {
    Result<std::string> decoded = DecodeBase64(data);
    if (!decoded.ok()) return InvalidArgument(data_key + ": " + decoded.status().message());
    out.pem = *decoded;
  }
  out.file = Resolve(Str(map, file_key), base_dir);
  return out;
}

Result<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string Credentials::Describe() const {
  std::string auth = !token.empty()               ? "bearer token"
                     : !token_file.empty()        ? "token file " + token_file
                     : !client_cert.empty()       ? "client certificate"
                                                  : "no credentials";
  return "server " + server + (context.empty() ? "" : " (context " + context + ")") + ", " + auth;
}

Result<std::string> DecodeBase64(const std::string& text) { return Base64Decode(text); }

Status RequireHttps(const std::string& server, const std::string& where) {
  if (server.rfind("https://", 0) == 0) return Status::Ok();
  return FailedPrecondition(where + " is " + server +
                            ": gpufed reaches Kubernetes API servers over https only (a bearer token or "
                            "client key would travel in clear text, and the server could not be verified)");
}

Result<Credentials> ParseKubeconfig(const std::string& text, const std::string& context,
                                    const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("kubeconfig is not valid YAML: ") + e.what());
  }
  if (!root || !root.IsMap()) return InvalidArgument("kubeconfig is not a YAML mapping");
  try {
    Credentials c;
    c.context = context.empty() ? Str(root, "current-context") : context;
    if (c.context.empty()) return InvalidArgument("no context given and the kubeconfig has no current-context");
    Result<YAML::Node> ctx = Named(root, "contexts", "context", c.context);
    if (!ctx.ok()) return ctx.status();
    c.ns = Str(*ctx, "namespace");
    Result<YAML::Node> cluster = Named(root, "clusters", "cluster", Str(*ctx, "cluster"));
    if (!cluster.ok()) return cluster.status();
    c.server = Str(*cluster, "server");
    if (c.server.empty()) return InvalidArgument("cluster " + Str(*ctx, "cluster") + " has no server");
    GPUFED_RETURN_IF_ERROR(RequireHttps(c.server, "cluster " + Str(*ctx, "cluster") + " server"));
    if ((*cluster)["insecure-skip-tls-verify"] && (*cluster)["insecure-skip-tls-verify"].as<bool>(false)) {
      return FailedPrecondition("insecure-skip-tls-verify is set for cluster " + Str(*ctx, "cluster") +
                                ": gpufed always verifies the API server's certificate");
    }
    if (!Str(*cluster, "tls-server-name").empty() || !Str(*cluster, "proxy-url").empty()) {
      return FailedPrecondition("tls-server-name and proxy-url are not supported");
    }
    Result<http::PemSource> ca = Pem(*cluster, "certificate-authority", "certificate-authority-data", base_dir);
    if (!ca.ok()) return ca.status();
    c.ca = *ca;

    std::string user_name = Str(*ctx, "user");
    if (!user_name.empty()) {
      Result<YAML::Node> user = Named(root, "users", "user", user_name);
      if (!user.ok()) return user.status();
      if ((*user)["exec"] || (*user)["auth-provider"]) {
        return FailedPrecondition("user " + user_name +
                                  " uses an exec plugin or auth-provider; gpufed does not run credential plugins: "
                                  "use a service-account token (token or tokenFile) or a client certificate");
      }
      if (!Str(*user, "username").empty() || !Str(*user, "password").empty()) {
        return FailedPrecondition("user " + user_name + " uses basic auth, which Kubernetes no longer supports");
      }
      c.token = Str(*user, "token");
      c.token_file = Resolve(Str(*user, "tokenFile"), base_dir);
      Result<http::PemSource> cert = Pem(*user, "client-certificate", "client-certificate-data", base_dir);
      if (!cert.ok()) return cert.status();
      Result<http::PemSource> key = Pem(*user, "client-key", "client-key-data", base_dir);
      if (!key.ok()) return key.status();
      c.client_cert = *cert;
      c.client_key = *key;
      if (c.client_cert.empty() != c.client_key.empty()) {
        return InvalidArgument("user " + user_name + " has a client certificate without a key, or a key without one");
      }
    }
    return c;
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("kubeconfig: ") + e.what());
  }
}

Result<Credentials> LoadKubeconfig(const std::string& path, const std::string& context) {
  Result<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return NotFound("kubeconfig " + path + " not found or unreadable");
  Result<Credentials> c = ParseKubeconfig(*text, context, fs::path(path).parent_path().string());
  if (!c.ok()) return Status(c.status().code(), "kubeconfig " + path + ": " + c.status().message());
  return c;
}

Result<Credentials> InClusterCredentials(const std::string& host, const std::string& port,
                                         const std::string& sa_dir) {
  if (host.empty() || port.empty()) {
    return FailedPrecondition("no kubeconfig given and not running in a cluster (KUBERNETES_SERVICE_HOST unset)");
  }
  Credentials c;
  bool v6 = host.find(':') != std::string::npos;
  c.server = "https://" + (v6 ? "[" + host + "]" : host) + ":" + port;
  c.token_file = sa_dir + "/token";
  c.ca.file = sa_dir + "/ca.crt";
  if (!fs::exists(c.token_file)) return FailedPrecondition("service-account token " + c.token_file + " missing");
  Result<std::string> ns = ReadSmallFile(sa_dir + "/namespace");
  if (ns.ok()) {
    c.ns = *ns;
    while (!c.ns.empty() && std::isspace(static_cast<unsigned char>(c.ns.back()))) c.ns.pop_back();
  }
  return c;
}

}  // namespace gpufed::connectors::kubernetes
