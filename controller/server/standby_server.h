#pragma once
// The API of a standby replica (issue 38: several `gpufed run --store postgres://` share
// one database and one of them leads). A standby runs no loop and holds no journal; it
// answers what it knows itself and what the database holds, and sends everything else to
// the leader:
//   GET /healthz                 200 (the process is alive)
//   GET /readyz                  503 with the replica's status: a load balancer that
//                                routes by readiness sends traffic to the leader only
//   GET /v1/status               the replica's status (any valid token)
//   GET /metrics                 gpufed_leader and the election's counters (admin or
//                                metrics token)
//   GET /v1/tenants/{t}/workloads[/{name}[/decisions]], /v1/workloads[/{name}],
//   GET /v1/decisions[?workload=NAME], /v1/explain/{name}, .../{name}/explain
//                                with `reads` set: answered here from the database
//                                (WorkloadReads, a read-only session), with the leader's
//                                JSON (workload_api.h), its tenant scoping (a tenant
//                                token sees only its tenant's: another's is 404) and its
//                                aliases; marked `X-Gpufed-Served-By: standby`. What the
//                                leader has not committed yet is not there (its decisions
//                                wait for its next write: store.h). 503 with
//                                Retry-After and the reason when the database cannot be
//                                read (a statement timeout bounds every read).
//   GET /v1/clusters, /v1/tenants[/{name}], /v1/queue, /v1/audit, /v1/history[?since=]
//                                with `views` set (and `reads` for /v1/history): answered
//                                from the leader's newest published view
//                                (standby_views.h), scoped to the caller by the leader's
//                                own functions, with X-Gpufed-View-Age and
//                                X-Gpufed-View-Term; 503 with the reason while none is
//                                published or the database cannot be read; a view too
//                                large to publish is sent to the leader.
//   GET /, /ui, /ui/, /ui/<asset>  the dashboard's page (ui_routes.h; no token: the assets
//                                hold no data, and its requests come back here).
//   anything else                307 to the same path and query on the leader's announced
//                                API (a 307 keeps the method and body: a submission is
//                                made, and answered 201 only once durable, by the leader),
//                                or 503 with Retry-After while no leader is known. So do
//                                the reads above whose `reads` or `views` is null.
// Nothing is written here: a 201 still means "durable", because only the leader gives one.
// The request's body is never read (the answer comes from its head); a request with a
// body is answered with "Connection: close", so no byte of it is parsed as a next request.
// Listens like the leader's API (the same flags: address, TLS, client CA, tokens). The
// leader's per-tenant rate limits come from the policy revision, which a standby does not
// load: it holds every tenant's reads to a Tenant's default rate instead
// (standby_read_limits.h; 429 with Retry-After over it), since its reads go one at a time
// through one database session.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "controller/common/clock.h"
#include "controller/common/status.h"
#include "controller/model/tenant.h"
#include "controller/server/connection_limits.h"
#include "controller/server/standby_read_limits.h"
#include "controller/server/token_table.h"
#include "controller/server/view_reads.h"
#include "controller/server/workload_reads.h"

namespace gpufed::server {

class GuardedServer;

struct StandbyOptions {
  std::string host = "127.0.0.1";
  int port = 0;
  TokenTable tokens;
  std::string tls_cert, tls_key, tls_client_ca;
  ConnectionLimits connections;
  // The replica's status (role, replica, leader, epoch): /readyz and /v1/status.
  std::function<nlohmann::json()> status;
  // The leader's API URL (scheme://host:port, no trailing '/'), when known.
  std::function<std::optional<std::string>()> leader_url;
  // Prometheus text: the election's metrics.
  std::function<std::string()> metrics;
  // --metrics-listen's standby: /metrics without a token and /healthz; 404 otherwise.
  bool metrics_only = false;
  // The workload reads answered here (above); null: redirected like every other request.
  // Must outlive the server.
  WorkloadReads* reads = nullptr;
  // The leader's published views answered here (above); null: redirected. Must outlive
  // the server.
  ViewReads* views = nullptr;
  // Each tenant's reads answered here, per second and burst (a Tenant's default API rate;
  // <= 0: unlimited), on `clock` (null: the wall clock; must outlive the server).
  double tenant_reads_per_second = model::Tenant::kDefaultApiRatePerSecond;
  int tenant_reads_burst = model::Tenant::kDefaultApiBurst;
  const gpufed::Clock* clock = nullptr;
};

// The header on every answer a standby gives from the database ("standby").
inline constexpr char kServedByHeader[] = "X-Gpufed-Served-By";

class StandbyServer {
 public:
  static Result<std::unique_ptr<StandbyServer>> Start(StandbyOptions options);
  ~StandbyServer();
  StandbyServer(const StandbyServer&) = delete;
  StandbyServer& operator=(const StandbyServer&) = delete;
  int port() const { return port_; }
  // Ends the listener and every connection (the leader's API takes the address next).
  void Stop();

 private:
  StandbyServer() = default;
  StandbyOptions options_;
  std::unique_ptr<StandbyReadLimits> limits_;
  std::unique_ptr<GuardedServer> http_;
  int port_ = -1;
};

}  // namespace gpufed::server
