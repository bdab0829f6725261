#include "controller/runtime/app_checks.h"

#include <filesystem>

#include "controller/server/listen_address.h"

namespace gpufed::runtime {

// The listeners' addresses, checked before anything starts: a malformed one, a public
// --metrics-listen, and plain HTTP off loopback without --allow-plaintext are refused.
Status CheckListeners(const AppOptions& o) {
  if (!o.tls_client_ca.empty() && o.tls_cert.empty()) {
    return InvalidArgument(
        "--tls-client-ca asks API clients for certificates in the TLS handshake: it needs "
        "--tls-cert and --tls-key");
  }
  if (!o.listen.empty()) {
    Result<server::ListenAddress> api = server::ParseListenAddress("--listen", o.listen);
    if (!api.ok()) return api.status();
    GPUFED_RETURN_IF_ERROR(server::CheckPlaintextListener("--listen", *api, !o.tls_cert.empty(), o.allow_plaintext));
  }
  if (!o.metrics_listen.empty()) {
    Result<server::MetricsEndpoint> metrics = server::ParseMetricsListen(o.metrics_listen);
    if (!metrics.ok()) return metrics.status();
    GPUFED_RETURN_IF_ERROR(server::CheckPlaintextListener("--metrics-listen", {metrics->host, metrics->port},
                                                          /*tls=*/false, o.allow_plaintext));
  }
  return Status::Ok();
}

// What changes when the TLS files are replaced: each one's size and modification time, or
// its absence.
std::string TlsFilesStamp(const AppOptions& o) {
  std::string stamp;
  for (const std::string& path : {o.tls_cert, o.tls_key, o.tls_client_ca}) {
    if (path.empty()) continue;
    std::error_code ec;
    const auto time = std::filesystem::last_write_time(path, ec);
    const auto size = ec ? 0 : std::filesystem::file_size(path, ec);
    stamp += ec ? std::string("absent,")
                : std::to_string(time.time_since_epoch().count()) + "/" + std::to_string(size) + ",";
  }
  return stamp;
}

// What /readyz and the log say about how this run is exposed: a listener serving plain
// HTTP off loopback, the log's key beside the journal.
std::vector<std::string> StartWarnings(const AppOptions& o) {
  std::vector<std::string> warnings;
  auto check = [&](const char* flag, const std::string& listen, bool tls) {
    if (listen.empty() || tls) return;
    Result<server::ListenAddress> a = server::ParseListenAddress(flag, listen);
    if (a.ok() && !server::IsLoopbackAddress(a->host)) {
      warnings.push_back(std::string(flag) + " " + listen +
                         " serves plain HTTP off loopback (--allow-plaintext): tokens and data cross the network "
                         "unencrypted unless a TLS proxy fronts it");
    }
  };
  check("--listen", o.listen, !o.tls_cert.empty());
  check("--metrics-listen", o.metrics_listen, false);
  if (o.audit_key.empty() && o.durability == Durability::kSynced) {
    warnings.push_back("the audit log's signing key is kept beside the journal in " + o.state_dir +
                       "/audit/signing.key: whoever can write the state folder can re-sign its history; keep the "
                       "key elsewhere (--audit-key) and cosign with a witness on another host");
  }
  return warnings;
}

}  // namespace gpufed::runtime
