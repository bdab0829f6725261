#pragma once
// The `local` connector: runs each workload's run.command as a child process on this
// machine, as the unprivileged account the Cluster names (`local.gpufed.io/run-as-user`),
// with only the environment the workload declares plus gpufed's own variables, in a
// folder of its own outside the controller's state folder (README.md has the design and
// every setting). GPUs are the Cluster's declared node pools; the assigned GPU indices
// reach the job through CUDA_VISIBLE_DEVICES (or `local.gpufed.io/gpu-env`) and
// GPUFED_GPUS.
//
// The controller keeps each job's pid, start time and exit status in its own folder,
// which the job cannot write: a wrapper process (the controller's user, leader of the
// job's process group) waits for the job and writes the exit status there. After a
// controller restart the connector re-adopts live jobs (the pid must still be the
// wrapper it started: same kernel start time and boot), reports finished ones by their
// exit status and vanished ones as lost, and starts submits it recorded but never began
// to launch. Cancel sends SIGTERM to the job's process group, SIGKILL after the grace
// period (`local.gpufed.io/grace`, default 10s), and only while the group's leader is
// verified to be the wrapper.
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "connectors/core/ledger.h"
#include "connectors/core/registry.h"
#include "connectors/local/bookkeeping_lock.h"
#include "connectors/local/job_process.h"
#include "connectors/local/local_settings.h"
#include "controller/common/mutex.h"

namespace gpufed::connectors::local {

class LocalConnector : public Connector {
 public:
  // `settings` come from ReadLocalSettings and PrepareJobRoot; the ledger and the
  // bookkeeping folders live in settings.bookkeeping_dir (0700).
  // `read_only` (FactoryContext::read_only, `gpufed plan --state`): the connector reads
  // the ledger and the bookkeeping folders and reports what they and the processes say,
  // and never launches, signals or reaps a job nor writes a file. A job recorded but
  // never launched is reported starting (the controller launches it when it next runs).
  // settings.shared_by_replicas: `ledger` is null and `leader_epoch` is the term this
  // connector serves; the record is read, and every step taken, under the shared
  // folder's lock (bookkeeping_lock.h), and a deposed term is refused.
  LocalConnector(const model::Cluster& cluster, LocalSettings settings, std::unique_ptr<ActionLedger> ledger,
                 const Clock* clock, bool read_only = false, int64_t leader_epoch = 0);
  ~LocalConnector() override;

  // Under replicas also Unavailable while another replica holds the shared folder's lock
  // for long, and FailedPrecondition once a later term has taken the folder.
  Result<Observation> Observe(const CallContext& ctx) override EXCLUDES(mu_);
  // Submit errors: InvalidArgument for a workload without run.command, a run.workingDir
  // outside the job's folder, a run.env that is not an environment, or (on a Cluster
  // with local.gpufed.io/accept-api-workloads "false") a workload submitted through the
  // API; Unavailable when the job's folders or processes cannot be made.
  Result<ApplyOutcome> Apply(const Action& action, const CallContext& ctx) override EXCLUDES(mu_);

 private:
  struct Job {
    Action action;
    std::string book;          // the bookkeeping folder
    ProcessIdentity wrapper;   // pid 0: no process (never started, or unknown)
    bool own_child = false;    // started by this process and not yet reaped
    RunState state = RunState::kStarting;
    std::string reason;
    bool lost = false;
    Duration started_at;
    Duration finished_at;
    Duration cancel_at;        // when SIGTERM was sent (0: not cancelled)
    bool killed = false;
  };

  // These work on a Job of jobs_, so the caller holds mu_.
  Status Spawn(Job& job, Duration now) REQUIRES(mu_);
  void Poll(Job& job, Duration now) REQUIRES(mu_);
  // Whether the job's wrapper runs now; reaps it when it is this process's child.
  bool WrapperRuns(Job& job) REQUIRES(mu_);
  // Signals the job's process group, only while its leader is verified to be our wrapper.
  void SignalJob(Job& job, int signal) REQUIRES(mu_);
  void Recover(Duration now) REQUIRES(mu_);
  // Under replicas: takes the shared folder's lock for one step, refuses a deposed term,
  // and on the first step reads the record the earlier terms left (Recover). Without
  // replicas: nothing to take (an empty optional).
  Result<std::optional<BookkeepingLock>> TakeTurn(Duration now) REQUIRES(mu_);
  std::string BookOf(const std::string& key) const;

  Mutex mu_;
  model::Cluster cluster_;
  LocalSettings settings_;
  std::unique_ptr<ActionLedger> ledger_ PT_GUARDED_BY(mu_);
  const bool read_only_;
  const int64_t leader_epoch_;
  bool recovered_ GUARDED_BY(mu_) = false;
  std::map<std::string, Job> jobs_ GUARDED_BY(mu_);
};

// The "local" provider (and RegisterLocalConnector, which registers it). Needs a FactoryContext state_dir; with
// read_only it makes no folder and does not prepare the job root (nothing will run). The factory refuses
// (FailedPrecondition naming the cluster and the annotation) the settings that
// ReadLocalSettings and PrepareJobRoot refuse: above all, jobs as root or as the
// controller's user without local.gpufed.io/allow-controller-user "true", and (with a
// FactoryContext::leader_epoch, replicas) a cluster without local.gpufed.io/bookkeeping-dir.
ConnectorProvider LocalProvider();
Status RegisterLocalConnector(ConnectorRegistry& registry);

}  // namespace gpufed::connectors::local
