#include "controller/audit/sinks/factory.h"

#include <charconv>

#include "controller/audit/sinks/https_sink.h"
#include "controller/audit/sinks/syslog_tls_sink.h"

namespace gpufed::audit {
std::string ResolveRepoPath(const std::string& root, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return root + "/" + path;
}

Result<std::unique_ptr<Sink>> MakeSink(Env* env, const model::AuditSink& spec, const std::string& repo_root) {
  const std::string where = "AuditSink " + spec.metadata.name + ": ";
  if (spec.tls.ca_file.empty())
    return InvalidArgument(where + "spec.tls.caFile is required (TLS verification is always on)");
  if (spec.type == model::AuditSinkType::kHttps) {
    if (spec.endpoint.rfind("https://", 0) != 0) return InvalidArgument(where + "endpoint must be an https:// URL");
    HttpsOptions o;
    o.url = spec.endpoint;
    o.ca_file = ResolveRepoPath(repo_root, spec.tls.ca_file);
    o.cert_file = ResolveRepoPath(repo_root, spec.tls.cert_file);
    o.key_file = ResolveRepoPath(repo_root, spec.tls.key_file);
    return std::unique_ptr<Sink>(new HttpsSink(o));
  }
  size_t colon = spec.endpoint.rfind(':');
  int port = 0;
  if (colon == std::string::npos ||
      std::from_chars(spec.endpoint.data() + colon + 1, spec.endpoint.data() + spec.endpoint.size(), port).ec !=
          std::errc() ||
      port <= 0 || port > 65535) {
    return InvalidArgument(where + "endpoint must be host:port, got '" + spec.endpoint + "'");
  }
  SyslogTlsOptions o;
  o.host = spec.endpoint.substr(0, colon);
  if (o.host.size() > 2 && o.host.front() == '[' && o.host.back() == ']') o.host = o.host.substr(1, o.host.size() - 2);
  o.port = port;
  o.ca_file = ResolveRepoPath(repo_root, spec.tls.ca_file);
  o.cert_file = ResolveRepoPath(repo_root, spec.tls.cert_file);
  o.key_file = ResolveRepoPath(repo_root, spec.tls.key_file);
  o.server_name = spec.tls.server_name;
  return std::unique_ptr<Sink>(new SyslogTlsSink(env, o));
}

}  // namespace gpufed::audit
