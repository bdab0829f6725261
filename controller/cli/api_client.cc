#include "controller/cli/api_client.h"

#include <httplib.h>

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "controller/common/secure_file.h"

namespace gpufed::cli {

void AddApiTargetOptions(CLI::App* cmd, ApiTarget& target) {
  cmd->add_option("--server", target.server, "Controller URL (default $GPUFED_SERVER or http://127.0.0.1:8080)");
  cmd->add_option("--token", target.token, "Bearer token (default $GPUFED_TOKEN or the file $GPUFED_TOKEN_FILE)");
  cmd->add_option("--ca-cert", target.ca_cert, "CA certificate to verify an HTTPS controller");
  cmd->add_option("--client-cert", target.client_cert,
                  "Client certificate (PEM) for a controller that requires one (mutual TLS; default "
                  "$GPUFED_CLIENT_CERT)");
  cmd->add_option("--client-key", target.client_key, "Private key of --client-cert (PEM; default $GPUFED_CLIENT_KEY)");
  cmd->add_option("--tenant", target.tenant, "The workload's tenant (default: the token's own; admins name one)");
}

std::string WorkloadsPath(const ApiTarget& target, const std::string& name) {
  std::string path = target.tenant.empty() ? "/v1/workloads" : "/v1/tenants/" + target.tenant + "/workloads";
  return name.empty() ? path : path + "/" + name;
}

namespace {

constexpr int kMaxRedirects = 3;

// A redirect's Location as (server, path): absolute (scheme://authority/path) or a path on
// the same server. PermissionDenied for a redirect from https to http.
Result<std::pair<std::string, std::string>> SplitRedirect(const std::string& from, const std::string& location) {
  if (location.starts_with("/")) return std::make_pair(from, location);
  const size_t scheme_end = location.find("://");
  if (scheme_end == std::string::npos) return InvalidArgument("the server redirected to an unusable Location");
  const std::string scheme = location.substr(0, scheme_end);
  if (scheme != "https" && scheme != "http") return InvalidArgument("the server redirected to a non-HTTP Location");
  if (from.starts_with("https://") && scheme != "https") {
    return Status(StatusCode::kPermissionDenied,
                  "the server redirected from https to http: refused (the token would "
                  "cross unencrypted)");
  }
  const size_t path_start = location.find('/', scheme_end + 3);
  if (path_start == std::string::npos) return std::make_pair(location, std::string("/"));
  return std::make_pair(location.substr(0, path_start), location.substr(path_start));
}

}  // namespace

Result<ApiResponse> CallApi(const ApiTarget& t, const std::string& method, const std::string& path,
                            const std::string& body, const std::string& content_type) {
  std::string server = t.server;
  if (server.empty() && std::getenv("GPUFED_SERVER")) server = std::getenv("GPUFED_SERVER");
  if (server.empty()) server = "http://127.0.0.1:8080";
  std::string token = t.token;
  if (token.empty() && std::getenv("GPUFED_TOKEN")) token = std::getenv("GPUFED_TOKEN");
  if (token.empty() && std::getenv("GPUFED_TOKEN_FILE")) {
    // A secret: refused when others may read it (secure_file.h).
    Result<std::string> text = ReadSecretFile(std::getenv("GPUFED_TOKEN_FILE"));
    if (!text.ok()) return Status(text.status().code(), "$GPUFED_TOKEN_FILE: " + text.status().message());
    token = text->substr(0, text->find('\n'));
  }
  std::string client_cert = t.client_cert, client_key = t.client_key;
  if (client_cert.empty() && std::getenv("GPUFED_CLIENT_CERT")) client_cert = std::getenv("GPUFED_CLIENT_CERT");
  if (client_key.empty() && std::getenv("GPUFED_CLIENT_KEY")) client_key = std::getenv("GPUFED_CLIENT_KEY");
  if (client_cert.empty() != client_key.empty()) {
    return InvalidArgument("--client-cert and --client-key go together");
  }
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  // A standby replica (gpufed run --store) answers with a 307 to the leader: followed, with
  // the same method, body and token, a few hops at most, and never from https to http
  // (the token would cross in the clear).
  std::string at = path;
  for (int hop = 0;; ++hop) {
    // httplib reads the pair when it makes its TLS context; a pair it cannot read shows
    // as a failed connection below.
    httplib::Client client(server, client_cert, client_key);
    if (!t.ca_cert.empty()) client.set_ca_cert_path(t.ca_cert);
    client.enable_server_certificate_verification(true);
    client.set_connection_timeout(5, 0);
    client.set_read_timeout(30, 0);
    httplib::Result res = method == "POST"     ? client.Post(at, headers, body, content_type)
                          : method == "DELETE" ? client.Delete(at, headers)
                                               : client.Get(at, headers);
    if (!res) return Unavailable("cannot reach " + server + ": " + httplib::to_string(res.error()));
    if ((res->status == 307 || res->status == 308) && res->has_header("Location") && hop < kMaxRedirects) {
      Result<std::pair<std::string, std::string>> next = SplitRedirect(server, res->get_header_value("Location"));
      if (!next.ok()) return next.status();
      server = next->first;
      at = next->second;
      continue;
    }
    ApiResponse out;
    out.status = res->status;
    out.body = nlohmann::json::parse(res->body, nullptr, false);
    return out;
  }
}

int ReportApiError(const std::string& command, const ApiResponse& r) {
  std::string code = "HTTP " + std::to_string(r.status), message;
  if (r.body.is_object() && r.body.contains("error")) {
    code = r.body["error"].value("code", code);
    message = r.body["error"].value("message", "");
  }
  std::cerr << "gpufed " << command << ": " << code << ": " << message << "\n";
  return 1;
}

}  // namespace gpufed::cli
