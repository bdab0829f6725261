#pragma once
// The `slurm` connector: an on-prem Slurm cluster through slurmrestd.
//
// Observe: nodes (split into GPU groups matched to the Cluster's node pools, see
// observe.h), the partition's state, and the jobs gpufed submitted (found by the tag in
// their comment) with Slurm states mapped to RunState.
// Apply: Submit runs a batch job (job_request.h) pinned to the placer's nodes with GRES
// for the GPU type or MIG profile; Cancel and Preempt cancel it (Slurm sends SIGTERM,
// then SIGKILL after KillWait, so a checkpointing job can save its state); a preempted
// job is reported as Preempted and gpufed requeues the workload as a new attempt.
//
// Idempotence across controller crashes: before submitting, the connector looks for a
// job carrying the same key, first in its ledger (<state_dir>/ledger.log: key -> job id,
// written after each submit) and then in Slurm's job list. A crash between submit and
// ledger write is covered by the job list; a job Slurm has already purged (MinJobAge) by
// the ledger. So a repeated Submit never creates a second job.
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
#include <mutex>
#include <set>
#include <string>

#include "connectors/core/ledger.h"
#include "connectors/core/registry.h"
#include "connectors/slurm/observe.h"
#include "connectors/slurm/slurm_client.h"

namespace gpufed::connectors::slurm {

class SlurmConnector : public Connector {
 public:
  // `ledger` may be null (no memory across restarts beyond Slurm's own job list).
  SlurmConnector(model::Cluster cluster, std::unique_ptr<SlurmClient> client, std::unique_ptr<ActionLedger> ledger,
                 std::function<int64_t()> unix_now);

  Result<Observation> Observe(const CallContext& ctx) override;
  Result<ApplyOutcome> Apply(const Action& action, const CallContext& ctx) override;

  // Slurm's own node list (all partitions), for diagnostics and tests.
  Result<std::vector<SlurmNode>> Inventory(const CallContext& ctx);
  // gpufed's jobs as Slurm reports them, by action key (newest job per key).
  Result<std::map<std::string, SlurmJob>> GpufedJobs(const CallContext& ctx);
  SlurmClient& client() { return *client_; }

 private:
  Result<ApplyOutcome> Submit(const Action& action, const CallContext& ctx);
  Result<ApplyOutcome> Stop(const Action& action, const CallContext& ctx);
  Result<JobPlacement> Resolve(const Action& action, const CallContext& ctx);
  Status RefreshGroups(const CallContext& ctx);
  Status Record(const std::string& kind, const std::string& key, const std::string& payload);

  std::mutex mu_;  // one Observe or Apply at a time: check-then-submit must not interleave
  model::Cluster cluster_;
  std::unique_ptr<SlurmClient> client_;
  std::unique_ptr<ActionLedger> ledger_;
  std::function<int64_t()> unix_now_;
  std::map<std::string, NodeGroup> groups_;     // by observed node name, from the last node list
  std::map<std::string, int64_t> job_ids_;      // key -> Slurm job id (ledger and listings)
  std::set<std::string> preempted_;             // keys gpufed preempted
  std::set<int64_t> rejected_jobs_;             // jobs accepted with warnings and cancelled
  std::set<std::pair<std::string, std::string>> applied_;  // (kind, key) without a ledger
};

// Test seams for the factory; the defaults are the real clock and sleep.
struct SlurmFactoryHooks {
  http::SleepFn sleep;
  std::function<int64_t()> unix_now;
  Duration auth_retry = Duration::FromSeconds(60);
};

// Validates the Cluster's connector settings and creates the connector (see README for
// the fields). InvalidArgument for missing or bad settings, including an unset token
// variable. FactoryContext settings: "slurm.caFile" (trust anchors for https).
Result<std::unique_ptr<SlurmConnector>> CreateSlurmConnector(const model::Cluster& cluster, const FactoryContext& ctx,
                                                             SlurmFactoryHooks hooks = {});

// Registers the "slurm" factory.
Status RegisterSlurmConnector(ConnectorRegistry& registry);

}  // namespace gpufed::connectors::slurm
