#pragma once
// The `slurm` connector: an on-prem Slurm cluster through slurmrestd.
//
// Observe: nodes (split into GPU groups matched to the Cluster's node pools, see
// observe.h), the partition's state, and the jobs gpufed submitted (see "Adoption") with
// Slurm states mapped to RunState.
// Apply: Submit runs a batch job (job_request.h) pinned to the placer's nodes with GRES
// for the GPU type or MIG profile, charged to the tenant's Slurm account when the site
// maps one (site_settings.h); Cancel and Preempt cancel it (Slurm sends SIGTERM, then
// SIGKILL after KillWait, so a checkpointing job can save its state); a preempted job is
// reported as Preempted and gpufed requeues the workload as a new attempt.
//
// Adoption: a job is gpufed's only when gpufed started it. Any Slurm user can submit a
// job whose name and comment look like gpufed's, so those never suffice. A job is adopted
// only when slurmrestd reports it running as gpufed's own Slurm user (connector.user,
// else the token's "sun" claim) and its comment carries a key; then by the job id the
// ledger (<state_dir>/ledger.log) recorded for that key as soon as Slurm answered the
// submit, before anything relied on it: a key with a recorded id adopts that id and no
// other job. Only for a key without a recorded id (a crash between the submit and the
// record, or a lost state folder) is the job adopted by its name and comment
// (the newest), and its id then recorded by the next Submit. A job of another Slurm user
// is never adopted, whatever its comment, name or id.
//
// Idempotence across controller crashes: before submitting, the connector looks for the
// key's job in its ledger and then (by the rule above) in Slurm's job list. A job Slurm
// has already purged (MinJobAge) is covered by the ledger. So a repeated Submit never
// creates a second job.
//
// Submit is reported done only with a job id. A job Slurm accepts with warnings (24.11
// ignores fields it cannot read, e.g. a GPU request in another version's spelling) is
// cancelled, remembered in the ledger as rejected (so its key can be submitted again),
// and the submit fails with InvalidArgument naming the warnings.
//
// The slurmrestd API version is negotiated by the client (slurm_client.h) on first use
// and after every reconnect; Observe reports it (Observation::api_version/api_summary).
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "connectors/core/ledger.h"
#include "connectors/core/registry.h"
#include "connectors/slurm/job_request.h"
#include "connectors/slurm/observe.h"
#include "connectors/slurm/site_settings.h"
#include "connectors/slurm/slurm_client.h"
#include "connectors/slurm/slurm_config.h"
#include "controller/common/mutex.h"

namespace gpufed::connectors::slurm {

class SlurmConnector : public Connector {
 public:
  // `ledger` may be null (no memory across restarts beyond Slurm's own job list).
  SlurmConnector(model::Cluster cluster, SlurmConfig config, SiteSettings site, std::unique_ptr<SlurmClient> client,
                 std::unique_ptr<ActionLedger> ledger, std::function<int64_t()> unix_now);

  Result<Observation> Observe(const CallContext& ctx) override EXCLUDES(mu_);
  Result<ApplyOutcome> Apply(const Action& action, const CallContext& ctx) override EXCLUDES(mu_);

  // Slurm's own node list (all partitions), for diagnostics and tests.
  Result<std::vector<SlurmNode>> Inventory(const CallContext& ctx);
  // gpufed's jobs as Slurm reports them, by action key: the jobs adopted by the rule above.
  Result<std::map<std::string, SlurmJob>> GpufedJobs(const CallContext& ctx) EXCLUDES(mu_);
  // The Slurm user gpufed acts as: connector.user, else the "sun" claim of the current
  // token; empty when neither is known (then nothing is adopted by its comment).
  std::string OwnSlurmUser() const;
  SlurmClient& client() { return *client_; }

 private:
  Result<std::map<std::string, SlurmJob>> GpufedJobsLocked(const CallContext& ctx) REQUIRES(mu_);
  Result<ApplyOutcome> Submit(const Action& action, const CallContext& ctx) REQUIRES(mu_);
  Result<ApplyOutcome> Stop(const Action& action, const CallContext& ctx) REQUIRES(mu_);
  Result<JobPlacement> Resolve(const Action& action, const CallContext& ctx) REQUIRES(mu_);
  Status RefreshGroups(const CallContext& ctx) REQUIRES(mu_);
  Status Record(const std::string& kind, const std::string& key, const std::string& payload) REQUIRES(mu_);

  Mutex mu_;  // one Observe or Apply at a time: check-then-submit must not interleave
  model::Cluster cluster_;
  SlurmConfig config_;
  SiteSettings site_;
  std::unique_ptr<SlurmClient> client_;
  std::unique_ptr<ActionLedger> ledger_ PT_GUARDED_BY(mu_);
  std::function<int64_t()> unix_now_;
  // By observed node name, from the last node list.
  std::map<std::string, NodeGroup> groups_ GUARDED_BY(mu_);
  // Key -> Slurm job id (ledger, submits, adoptions).
  std::map<std::string, int64_t> job_ids_ GUARDED_BY(mu_);
  std::set<std::string> preempted_ GUARDED_BY(mu_);  // keys gpufed preempted
  std::set<int64_t> rejected_jobs_ GUARDED_BY(mu_);  // jobs accepted with warnings and cancelled
  std::set<std::pair<std::string, std::string>> applied_ GUARDED_BY(mu_);  // (kind, key) without a ledger
};

// Test seams for the factory; the defaults are the real clock and sleep.
struct SlurmFactoryHooks {
  http::SleepFn sleep;
  std::function<int64_t()> unix_now;
  Duration auth_retry = Duration::FromSeconds(60);
};

// Decodes the Cluster's connector block (slurm_config.h), checks it and the
// slurm.gpufed.io/ annotations (site_settings.h), and creates the connector (see README
// for the fields).
// InvalidArgument for missing or bad settings, including an unset token variable and a
// plain http:// endpoint that is not loopback with the explicit opt-in (it would send
// the JWT in clear text). connector.caFile: the trust anchors for an https endpoint.
Result<std::unique_ptr<SlurmConnector>> CreateSlurmConnector(const model::Cluster& cluster, const FactoryContext& ctx,
                                                             const SlurmFactoryHooks& hooks = {});

// The "slurm" provider: its config check and schema, capabilities (it paces its own
// requests: the client's token bucket is the cluster's qps/burst), and factory.
ConnectorProvider SlurmProvider();
Status RegisterSlurmConnector(ConnectorRegistry& registry);

}  // namespace gpufed::connectors::slurm
