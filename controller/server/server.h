#pragma once
// The HTTP API (cpp-httplib), served on its own threads next to the run loop:
//   POST   /v1/tenants/{t}/workloads         YAML or JSON Workload; 201 with the record
//   GET    /v1/tenants/{t}/workloads[/{name}] DELETE /v1/tenants/{t}/workloads/{name} (cancel)
//   GET    /v1/tenants/{t}/workloads/{name}/decisions, .../{name}/explain, /v1/tenants/{t}
//   GET    /v1/clusters, /v1/decisions (admin: every decision)
//   GET    /healthz, /readyz (no token), /metrics (Prometheus text)
// Workloads are namespaced by tenant; /v1/workloads[/{name}], /v1/explain/{name} and
// /v1/decisions?workload= are aliases for the token's own tenant.
// Every /v1 and /metrics request needs "Authorization: Bearer TOKEN", checked before
// any body is read (a refused request costs no buffering). A tenant token sees and
// cancels only its tenant's workloads (others look absent); an admin token sees all;
// /metrics (every tenant's queues and spend) needs an admin or a metrics token, and a
// metrics token reads nothing else. A tenant token over its Tenant.spec.api.rateLimit
// gets 429 with Retry-After (admin tokens are exempt). With tls_client_ca (mutual TLS) every
// client presents a certificate in the handshake; the token still decides what a call may
// do, and the certificate's subject names who made it (client_certificate.h). Request bodies are capped at
// max_body_bytes for every transfer encoding and content type (413). Errors are JSON:
// {"error": {"code": "...", "message": "..."}}.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "controller/audit/log_view.h"
#include "controller/common/clock.h"
#include "controller/reconcile/controller.h"
#include "controller/server/connection_limits.h"
#include "controller/server/token_table.h"

namespace gpufed::server {

class Admission;
class GuardedServer;
class TlsContext;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;                                  // 0: any free port
  TokenTable tokens;                             // bearer tokens (digests) -> caller
  std::string tls_cert;                          // PEM files; empty: plain HTTP
  std::string tls_key;
  // PEM CA certificates (with tls_cert): mutual TLS. Every client must present a
  // certificate that chains to one of them, and each call is named by its subject
  // (client_certificate.h); empty: no client certificates.
  std::string tls_client_ca;
  size_t max_body_bytes = size_t{1} << 20;        // larger bodies get 413 (gpufed run --max-body)
  // Header, read and write deadlines, keep-alive limits and connection caps per client
  // address and in all (GuardedServer; see README.md).
  ConnectionLimits connections;
  // Time for the per-tenant rate limits (Tenant.spec.api); null: the wall clock.
  const gpufed::Clock* clock = nullptr;
  // Shown in /readyz's `warnings` (plain HTTP off loopback under --allow-plaintext).
  std::vector<std::string> warnings;
  // Who this replica is and who leads (several replicas on one database, issue 38), for
  // /readyz and /v1/status; empty: one process on its own ({"role": "single"}).
  std::function<nlohmann::json()> replica_status;
  // The journal's tree served under /v1/audit/log/ (audit_log_routes.h); null: 503.
  const audit::LogView* audit_log = nullptr;
};

// Parses "ADDR:PORT" and the tokens file ("TOKEN TENANT", "TOKEN admin" or "TOKEN metrics"
// per line, each with an optional NAME, '#' comments; token_table.h). Without a tokens file
// an admin token is generated once and kept in <state_dir>/admin.token (mode 0600), named
// kGeneratedAdminPrincipal; it is never logged.
Result<ServerOptions> MakeServerOptions(const std::string& listen, const std::string& tokens_file,
                                        const std::string& tls_cert, const std::string& tls_key,
                                        const std::string& state_dir);

// A listener's TLS: none (no certificate), server-only, or mutual (a client CA). Refuses
// what could never work: client certificates without TLS, and tokens bound to
// certificates (x509: names) that no connection is asked for.
Result<std::unique_ptr<TlsContext>> LoadApiTls(const std::string& tls_cert, const std::string& tls_key,
                                               const std::string& tls_client_ca, const TokenTable& tokens);

class ApiServer {
 public:
  // Binds and starts serving; `controller` must outlive the server.
  static Result<std::unique_ptr<ApiServer>> Start(reconcile::Controller* controller, const ServerOptions& options);
  ~ApiServer();
  int port() const { return port_; }
  void Stop();
  // Reads the certificate, key and client CA files again (SIGHUP, or a file that changed)
  // and serves new connections with them; on an error the certificate in use stays, and
  // the error names the file. FailedPrecondition for a plain-HTTP server.
  Status ReloadTls();

 private:
  ApiServer() = default;
  std::string tls_cert_, tls_key_, tls_client_ca_;
  std::unique_ptr<GuardedServer> http_;
  std::unique_ptr<TokenTable> tokens_;
  std::unique_ptr<Admission> admission_;
  int port_ = 0;
};

}  // namespace gpufed::server
