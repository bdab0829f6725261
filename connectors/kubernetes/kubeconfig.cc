#include "connectors/kubernetes/kubeconfig.h"

#include <filesystem>

#include "controller/common/base64.h"
#include "controller/common/bounded_read.h"
#include "controller/common/yaml_tree.h"

namespace gpufed::connectors::kubernetes {
namespace {

namespace fs = std::filesystem;

std::string Resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || fs::path(path).is_absolute() || base_dir.empty()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

// A kubeconfig holds a few clusters, users and contexts (certificates inline at most): these
// bound a hostile or mistaken file, in bytes before it is read and in nodes as it is parsed.
constexpr size_t kMaxKubeconfigBytes = size_t{16} << 20;
constexpr size_t kMaxKubeconfigNodes = 200000;
// A service account's namespace file holds one name.
constexpr size_t kMaxNamespaceFileBytes = 4096;

// Finds the entry named `name` in a kubeconfig list (clusters, users, contexts) and
// returns its `field` member (cluster, user, context).
Result<const YamlNode*> Named(const YamlNode& root, const char* list, const char* field, const std::string& name) {
  const YamlNode* items = root.Find(list);
  if (items != nullptr && items->IsSequence()) {
    for (const YamlNode* item : items->elements()) {
      const YamlNode* item_name = item->Find("name");
      if (item_name != nullptr && item_name->IsScalar() && item_name->Scalar() == name) {
        const YamlNode* value = item->Find(field);
        if (value == nullptr || !value->IsMap()) {
          return InvalidArgument(std::string(list) + " entry " + name + " has no " + field);
        }
        return value;
      }
    }
  }
  return InvalidArgument(std::string("no ") + field + " named \"" + name + "\" in " + list);
}

std::string Str(const YamlNode& map, const char* key) {
  const YamlNode* v = map.Find(key);
  return v != nullptr && v->IsScalar() ? v->Scalar() : "";
}

// Whether `key` is set to anything but false: an unreadable value ("maybe", a list)
// counts as set, so a setting that weakens security is refused rather than ignored.
bool SetToAnythingButFalse(const YamlNode& map, const char* key) {
  const YamlNode* v = map.Find(key);
  if (v == nullptr || v->IsNull()) return false;
  if (!v->IsScalar()) return true;
  static constexpr std::string_view kFalse[] = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
  for (std::string_view f : kFalse) {
    if (v->Scalar() == f) return false;
  }
  return true;
}

Result<http::PemSource> Pem(const YamlNode& map, const char* file_key, const std::string& data_key,
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

}  // namespace

std::string Credentials::Describe() const {
  std::string auth = !token.empty()         ? "bearer token"
                     : !token_file.empty()  ? "token file " + token_file
                     : !client_cert.empty() ? "client certificate"
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

Result<Credentials> ParseKubeconfig(const std::string& text, const std::string& context, const std::string& base_dir) {
  const YamlStream stream =
      YamlStream::Parse(text, {.max_documents = 1, .max_nodes_per_document = kMaxKubeconfigNodes});
  if (const std::optional<YamlProblem>& problem = stream.problem()) {
    return InvalidArgument("kubeconfig is not valid YAML: line " + std::to_string(problem->line) + ", column " +
                           std::to_string(problem->column) + ": " + problem->message);
  }
  if (stream.documents().empty() || !stream.documents()[0]->IsMap()) {
    return InvalidArgument("kubeconfig is not a YAML mapping");
  }
  const YamlNode& root = *stream.documents()[0];
  Credentials c;
  c.context = context.empty() ? Str(root, "current-context") : context;
  if (c.context.empty()) return InvalidArgument("no context given and the kubeconfig has no current-context");
  Result<const YamlNode*> ctx = Named(root, "contexts", "context", c.context);
  if (!ctx.ok()) return ctx.status();
  c.ns = Str(**ctx, "namespace");
  Result<const YamlNode*> cluster = Named(root, "clusters", "cluster", Str(**ctx, "cluster"));
  if (!cluster.ok()) return cluster.status();
  c.server = Str(**cluster, "server");
  if (c.server.empty()) return InvalidArgument("cluster " + Str(**ctx, "cluster") + " has no server");
  GPUFED_RETURN_IF_ERROR(RequireHttps(c.server, "cluster " + Str(**ctx, "cluster") + " server"));
  if (SetToAnythingButFalse(**cluster, "insecure-skip-tls-verify")) {
    return FailedPrecondition("insecure-skip-tls-verify is set for cluster " + Str(**ctx, "cluster") +
                              ": gpufed always verifies the API server's certificate");
  }
  if (!Str(**cluster, "tls-server-name").empty() || !Str(**cluster, "proxy-url").empty()) {
    return FailedPrecondition("tls-server-name and proxy-url are not supported");
  }
  Result<http::PemSource> ca = Pem(**cluster, "certificate-authority", "certificate-authority-data", base_dir);
  if (!ca.ok()) return ca.status();
  c.ca = *ca;

  std::string user_name = Str(**ctx, "user");
  if (!user_name.empty()) {
    Result<const YamlNode*> user = Named(root, "users", "user", user_name);
    if (!user.ok()) return user.status();
    if ((*user)->Find("exec") != nullptr || (*user)->Find("auth-provider") != nullptr) {
      return FailedPrecondition("user " + user_name +
                                " uses an exec plugin or auth-provider; gpufed does not run credential plugins: "
                                "use a service-account token (token or tokenFile) or a client certificate");
    }
    if (!Str(**user, "username").empty() || !Str(**user, "password").empty()) {
      return FailedPrecondition("user " + user_name + " uses basic auth, which Kubernetes no longer supports");
    }
    c.token = Str(**user, "token");
    c.token_file = Resolve(Str(**user, "tokenFile"), base_dir);
    Result<http::PemSource> cert = Pem(**user, "client-certificate", "client-certificate-data", base_dir);
    if (!cert.ok()) return cert.status();
    Result<http::PemSource> key = Pem(**user, "client-key", "client-key-data", base_dir);
    if (!key.ok()) return key.status();
    c.client_cert = *cert;
    c.client_key = *key;
    if (c.client_cert.empty() != c.client_key.empty()) {
      return InvalidArgument("user " + user_name + " has a client certificate without a key, or a key without one");
    }
  }
  return c;
}

Result<Credentials> LoadKubeconfig(const std::string& path, const std::string& context) {
  Result<std::string> text = ReadFileBounded(path, kMaxKubeconfigBytes);
  if (!text.ok()) return Status(text.status().code(), "kubeconfig " + path + ": " + text.status().message());
  Result<Credentials> c = ParseKubeconfig(*text, context, fs::path(path).parent_path().string());
  if (!c.ok()) return Status(c.status().code(), "kubeconfig " + path + ": " + c.status().message());
  return c;
}

Result<Credentials> InClusterCredentials(const std::string& host, const std::string& port, const std::string& sa_dir) {
  if (host.empty() || port.empty()) {
    return FailedPrecondition("no kubeconfig given and not running in a cluster (KUBERNETES_SERVICE_HOST unset)");
  }
  Credentials c;
  bool v6 = host.find(':') != std::string::npos;
  c.server = "https://" + (v6 ? "[" + host + "]" : host) + ":" + port;
  c.token_file = sa_dir + "/token";
  c.ca.file = sa_dir + "/ca.crt";
  if (!fs::exists(c.token_file)) return FailedPrecondition("service-account token " + c.token_file + " missing");
  Result<std::string> ns = ReadFileBounded(sa_dir + "/namespace", kMaxNamespaceFileBytes);
  if (ns.ok()) {
    c.ns = *ns;
    while (!c.ns.empty() && std::isspace(static_cast<unsigned char>(c.ns.back()))) c.ns.pop_back();
  }
  return c;
}

}  // namespace gpufed::connectors::kubernetes
