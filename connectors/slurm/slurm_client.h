#pragma once
// slurmrestd over the shared HTTP client: JWT headers, the token re-read on every call
// (so a rotated token file or a renewed variable is picked up without a restart), and
// every failure turned into a Status the reconcile loop acts on:
//
//   Unavailable        slurmrestd unreachable or timing out, HTTP 5xx/429, a malformed
//                      reply, Slurm communication errors, and Slurm 22.05's bare
//                      "Unspecified error" (slurmctld down *or* token rejected: 22.05
//                      does not tell them apart; see README)          -> back off, retry
//   DeadlineExceeded   the request timed out                          -> back off, retry
//   Unauthenticated    no token, not a JWT, expired (checked locally from its `exp`
//                      claim, so nothing is sent), or HTTP 401
//   PermissionDenied   HTTP 403
//   InvalidArgument    Slurm refused the request (unknown partition, node or GRES, ...)
//   NotFound           an unknown job id
//   FailedPrecondition TLS verification failed, or slurmrestd does not serve the API
//                      version (HTTP 404)
//
// After a credential failure the same token is not sent again for `auth_retry`: calls
// fail fast with the same error, so a bad token never turns into a retry storm.
// Secrets never appear in a Status message.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "connectors/http/http_client.h"
#include "connectors/slurm/api.h"

namespace gpufed::connectors::slurm {

struct ClientSettings {
  std::string endpoint;            // http(s)://host:port
  std::string user;                // X-SLURM-USER-NAME; empty: the token's "sun" claim
  std::string token_env;           // exactly one of token_env and token_file
  std::string token_file;
  std::string ca_file;             // https trust anchors; empty: the system store
  const ApiMapping* api = nullptr;
  Duration timeout = Duration::FromSeconds(10);  // per request (and never beyond the call's)
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

class SlurmClient {
 public:
  // InvalidArgument for a bad endpoint or a missing token reference; FailedPrecondition
  // for an unreadable CA file. The token itself is read on every call.
  static Result<std::unique_ptr<SlurmClient>> Create(ClientSettings settings, http::SleepFn sleep = {});

  Result<std::vector<SlurmNode>> Nodes(const CallContext& ctx);
  Result<std::vector<SlurmPartition>> Partitions(const CallContext& ctx);
  Result<std::vector<SlurmJob>> Jobs(const CallContext& ctx);
  // The new job's id. Informational errors of a successful submit (a held job) are
  // ignored.
  Result<int64_t> Submit(const JobRequest& request, const CallContext& ctx);
  // Cancels (SIGCONT, SIGTERM, then SIGKILL after KillWait). OK for a finished job;
  // NotFound for an id slurmctld does not know.
  Status Cancel(int64_t job_id, const CallContext& ctx);

  const ApiMapping& api() const { return *settings_.api; }
  int64_t requests_sent() const { return http_->requests_sent(); }

 private:
  SlurmClient(ClientSettings settings, std::unique_ptr<http::Client> http)
      : settings_(std::move(settings)), http_(std::move(http)) {}
  Result<std::string> ReadToken() const;
  Result<nlohmann::json> Call(const std::string& method, const std::string& path, const std::string& body,
                              const CallContext& ctx);
  std::string TokenSource() const;

  ClientSettings settings_;
  std::unique_ptr<http::Client> http_;
  std::mutex mu_;                        // guards the auth circuit below
  size_t rejected_token_ = 0;            // hash of the token slurmrestd last refused
  Duration rejected_until_;
  Status rejected_status_;
};

// Turns Slurm's `errors` array of a failed reply into a Status (see the file comment).
Status StatusFromSlurmErrors(const std::vector<SlurmError>& errors, int http_status, const std::string& what);

}  // namespace gpufed::connectors::slurm
