#pragma once
// The `local` connector: runs each workload's run.command as a child process on this
// machine. GPUs are the Cluster's declared node pools; the assigned GPU indices reach
// the process through CUDA_VISIBLE_DEVICES (or the variable named by the Cluster
// annotation `local.gpufed.io/gpu-env`, for fake GPUs on machines without any) and
// always through GPUFED_GPUS. Output goes to <state>/jobs/<key>/log.
//
// Each job runs under a small /bin/sh wrapper in its own session that writes its pid
// first and its exit status last, so the connector learns how a job ended even when
// the controller restarted in between: on start it re-adopts live processes (the pid must
// still run the wrapper), reports finished ones by their exit file, reports jobs
// that vanished without one as lost, and starts submits it had recorded but never
// launched. Cancel sends SIGTERM to the job's process group, then SIGKILL after the
// grace period (annotation `local.gpufed.io/grace`, default 10s).
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "connectors/core/ledger.h"
#include "connectors/core/registry.h"

namespace gpufed::connectors::local {

class LocalConnector : public Connector {
 public:
  LocalConnector(const model::Cluster& cluster, std::string state_dir, std::unique_ptr<ActionLedger> ledger,
                 const Clock* clock);
  ~LocalConnector() override;

  Result<Observation> Observe(const CallContext& ctx) override;
  Result<ApplyOutcome> Apply(const Action& action, const CallContext& ctx) override;

 private:
  struct Job {
    Action action;
    std::string dir;
    int pid = 0;               // session leader (the wrapper shell)
    bool own_child = false;    // started by this process (waitpid works)
    RunState state = RunState::kStarting;
    std::string reason;
    bool lost = false;
    Duration started_at;
    Duration finished_at;
    Duration cancel_at;        // when SIGTERM was sent (0: not cancelled)
    bool killed = false;
  };

  Status Spawn(Job& job, Duration now);
  void Poll(Job& job, Duration now);
  void Recover(Duration now);

  std::mutex mu_;
  model::Cluster cluster_;
  std::string state_dir_;
  std::unique_ptr<ActionLedger> ledger_;
  std::string gpu_env_ = "CUDA_VISIBLE_DEVICES";
  Duration grace_ = Duration::FromSeconds(10);
  std::map<std::string, Job> jobs_;
};

// Registers the "local" factory. Needs a FactoryContext state_dir.
Status RegisterLocalConnector(ConnectorRegistry& registry);

}  // namespace gpufed::connectors::local
