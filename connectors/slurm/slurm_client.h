#pragma once
// slurmrestd over the shared HTTP client: API version negotiation (negotiate.h), JWT
// headers with the token re-read on every call (so a rotated token file or a renewed
// variable is picked up without a restart), and every failure turned into a Status the
// reconcile loop acts on:
//
//   Unavailable        slurmrestd unreachable, HTTP 5xx/429, a malformed reply (naming
//                      version, endpoint and field), Slurm communication errors, and Slurm
//                      22.05's bare "Unspecified error" (slurmctld down *or* token rejected:
//                      22.05 does not tell them apart; see README)    -> back off, retry
//   DeadlineExceeded   the request timed out                          -> back off, retry
//   Unauthenticated    no token, not a JWT, expired (checked locally from its `exp`
//                      claim, so nothing is sent), HTTP 401, or HTTP 511 (24.11: slurmctld
//                      rejected the token, Slurm error 1007)
//   PermissionDenied   HTTP 403
//   InvalidArgument    Slurm refused the request (unknown partition, node or GRES, ...)
//   NotFound           an unknown job id
//   FailedPrecondition TLS verification failed, slurmrestd does not serve a path (HTTP
//                      404), or it offers no API version gpufed speaks (or not the pinned one)
//
// Connection: the first request negotiates the version (GET /openapi/v3, then a ping of
// the chosen version for the Slurm release). A failure that may mean slurmrestd went away
// or changed (unreachable, timeout, a reply that is not its JSON or does not parse as the
// negotiated version, a 404 for a versioned path) drops the connection, and the next
// request negotiates again: an upgraded Slurm is spoken to in its new version without a
// restart. Slurm's own errors (slurmctld down, a refused request) keep it.
//
// Each public call ends within its CallContext's timeout, negotiation included (one
// http::CallBudget for all its requests; each request also within `timeout`). A reply
// over `max_reply_bytes` fails the call (Unavailable) while it arrives.
//
// After a credential failure the same token is not sent again for `auth_retry`: calls
// fail fast with the same error, so a bad token never turns into a retry storm.
// Secrets never appear in a Status message. Calls are safe from several threads.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "connectors/http/http_client.h"
#include "connectors/slurm/api.h"
#include "controller/common/mutex.h"

namespace gpufed::connectors::slurm {

inline constexpr size_t kDefaultMaxReplyBytes = size_t{128} << 20;

struct ClientSettings {
  std::string endpoint;            // http(s)://host:port
  std::string user;                // X-SLURM-USER-NAME; empty: the token's "sun" claim
  std::string token_env;           // exactly one of token_env and token_file
  std::string token_file;
  std::string ca_file;             // https trust anchors; empty: the system store
  std::string api_version = kAutoApiVersion;  // "auto" or a supported version
  Duration timeout = Duration::FromSeconds(10);  // per request (and never beyond the call's)
  // Slurm's lists are not paged: GET /jobs returns every job slurmctld holds. v0.0.42
  // spends ~8.7 KiB per job (pretty-printed, tests/fixtures/slurm), so 128 MiB holds
  // ~15,000 jobs, above Slurm's default MaxJobCount (10,000). Sites with a larger
  // MaxJobCount raise it.
  size_t max_reply_bytes = kDefaultMaxReplyBytes;
  http::LogFn log;                 // refusals (http/peer_log.h); empty: standard error
  double qps = 50;
  int burst = 100;
  Duration auth_retry = Duration::FromSeconds(60);
  std::function<int64_t()> unix_now;  // wall clock, Unix seconds; default: the system clock
};

// The parts of a JWT the connector checks; never the signature (slurmctld does that).
struct JwtClaims {
  int64_t exp = 0;                 // 0 when absent
  std::string user;                // Slurm's "sun" claim
};
// Unauthenticated when `token` is not a JWT with a JSON payload.
Result<JwtClaims> ParseJwt(const std::string& token);

// What the client is connected to.
struct ServerInfo {
  std::string api_version;               // in use: "v0.0.42"
  std::string release;                   // "24.11.5"; empty when the server does not say
  std::vector<std::string> offered;      // all the server offers, oldest first
  // "slurmrestd API v0.0.42 (Slurm 24.11.5)"
  std::string Describe() const;
};

class SlurmClient {
 public:
  // InvalidArgument for a bad endpoint, a missing token reference or an unsupported
  // api_version; FailedPrecondition for an unreadable CA file. Sends nothing: the token
  // is read on every call, the version negotiated by the first.
  static Result<std::unique_ptr<SlurmClient>> Create(ClientSettings settings, http::SleepFn sleep = {});

  // Negotiates now when not connected (every call below does this itself).
  Status Connect(const CallContext& ctx) EXCLUDES(mu_);
  // Empty api_version until connected; the last connection's after a failure.
  ServerInfo server() const EXCLUDES(mu_);
  bool connected() const EXCLUDES(mu_);

  Result<std::vector<SlurmNode>> Nodes(const CallContext& ctx);
  Result<std::vector<SlurmPartition>> Partitions(const CallContext& ctx);
  Result<std::vector<SlurmJob>> Jobs(const CallContext& ctx);
  // One job; nullopt when slurmctld does not know the id (never had it, or purged it).
  Result<std::optional<SlurmJob>> Job(int64_t job_id, const CallContext& ctx);
  // What Slurm answered to the submit: its job id (0: nothing was submitted), warnings and
  // errors, for the caller to judge (SlurmConnector); refusals (HTTP 4xx/5xx) as Status.
  Result<SubmitReply> Submit(const JobRequest& request, const CallContext& ctx);
  // Cancels (SIGCONT, SIGTERM, then SIGKILL after KillWait). OK for a finished job;
  // NotFound for an id slurmctld does not know. Where the version answers every cancel
  // with success (v0.0.40, v0.0.41) the job is read back: Unavailable when it still runs.
  Status Cancel(int64_t job_id, const CallContext& ctx);

  int64_t requests_sent() const { return http_->requests_sent(); }
  http::RefusalCounts refusals() const { return http_->refusals(); }

 private:
  struct Exchange {
    int status = 0;
    nlohmann::json body;             // discarded when the body is not JSON
    std::string text;                // the raw body
  };
  SlurmClient(ClientSettings settings, std::unique_ptr<http::Client> http)
      : settings_(std::move(settings)), http_(std::move(http)) {}
  Result<std::string> ReadToken() const;
  std::string TokenSource() const;
  // One request with the token: transport errors and credential refusals (401, 403, 511)
  // as Status, everything else as the exchange.
  // Every request of a public call draws on one budget (http::CallBudget).
  Result<Exchange> Send(const std::string& method, const std::string& path, const std::string& body,
                        const http::CallBudget& budget) EXCLUDES(mu_);
  // Send, then HTTP and Slurm errors as Status; the JSON of a 2xx reply.
  Result<nlohmann::json> Call(const std::string& method, const std::string& path, const std::string& body,
                              const http::CallBudget& budget, const ApiMapping& api);
  Result<std::vector<std::string>> Offered(const http::CallBudget& budget);
  Status ConnectWithin(const http::CallBudget& budget) EXCLUDES(mu_);
  Result<std::optional<SlurmJob>> JobWithin(int64_t job_id, const http::CallBudget& budget);
  // The adapter to use, connecting first when needed.
  Result<const ApiMapping*> Ready(const http::CallBudget& budget) EXCLUDES(mu_);
  // Forgets the negotiated version: the next request negotiates again.
  void Drop() EXCLUDES(mu_);
  // Drops the connection when a reply of the negotiated version does not parse as one.
  template <typename T>
  T Noted(T result);

  ClientSettings settings_;
  std::unique_ptr<http::Client> http_;
  mutable Mutex mu_;
  size_t rejected_token_ GUARDED_BY(mu_) = 0;  // hash of the token slurmrestd last refused
  Duration rejected_until_ GUARDED_BY(mu_);
  Status rejected_status_ GUARDED_BY(mu_);
  const ApiMapping* api_ GUARDED_BY(mu_) = nullptr;  // null: not connected
  bool pinged_ GUARDED_BY(mu_) = false;              // the release is known (pinged since connecting)
  ServerInfo server_ GUARDED_BY(mu_);
};

}  // namespace gpufed::connectors::slurm
