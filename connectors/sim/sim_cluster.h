#pragma once
// An in-process GPU cluster driven by virtual time: jobs run for their expected
// duration, checkpoint at their interval, elastic nodes arrive after the provisioning
// delay and leave after idling, and scripted failures (outage, node loss, spot
// reclaim) happen at their times. Deterministic: the same actions at the same times
// give the same cluster, which is how SimConnector rebuilds it from its ledger after a
// controller restart. Not thread-safe; SimConnector serialises access.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "connectors/core/connector.h"
#include "connectors/sim/scenario.h"
#include "controller/model/cluster.h"

namespace gpufed::connectors::sim {

class SimCluster {
 public:
  // `cluster` is copied; failures are this cluster's scripted failures.
  SimCluster(const model::Cluster& cluster, std::vector<Failure> failures);

  // Processes every event up to and including `now`, in time order. Time never runs back.
  void AdvanceTo(Duration now);
  Duration now() const { return now_; }
  // Inside a scripted outage: the cluster does not answer.
  bool down() const { return down_; }

  Observation Observe() const;
  // Starts a job (at now + start_delay). FailedPrecondition when the named nodes or
  // GPUs lack capacity, InvalidArgument for unknown nodes or pools. Not idempotent by
  // itself: SimConnector deduplicates keys first.
  Status Submit(const Action& action);
  // Ends an active job as Cancelled or Preempted; no-op for a finished job.
  Status Stop(const Action& action, RunState to);

  // How long a finished job is still reported, as a real scheduler keeps finished jobs
  // for a while (Slurm's MinJobAge): longer than any pass interval, so the controller
  // sees every ending; short enough that observing does not grow with history.
  static constexpr Duration kFinishedRetention = Duration::FromSeconds(3600);

 private:
  struct Node {
    std::string name;
    int pool = 0;
    bool elastic = false;
    Duration ready_at;
    Duration idle_since;
    int64_t free_cpu = 0;
    int64_t free_memory = 0;
    std::vector<ObservedGpu> gpus;
  };
  struct Job {
    Action action;
    RunState state = RunState::kStarting;
    std::vector<std::string> nodes;   // real node per gang member
    Duration start_at;
    Duration finished_at;
    std::string reason;
    Money price;                      // per GPU-hour
  };

  Duration NextEvent() const;       // earliest event strictly after now_ (0 = none)
  void ProcessAt(Duration t);
  void Finish(Job& job, RunState to, const std::string& reason, Duration at);
  void Release(const Job& job, Duration at);
  Node* FindNode(const std::string& name);
  Duration EndOf(const Job& job) const;
  Duration Progress(const Job& job, Duration at) const;
  Duration RunTime(const Job& job, Duration at) const;
  int64_t TotalMilli(const Job& job) const;
  void RemoveNode(const std::string& name, RunState to, const std::string& reason, Duration at);

  model::Cluster cluster_;
  std::vector<Failure> failures_;
  std::vector<bool> failure_started_;
  std::vector<bool> failure_ended_;
  std::vector<Node> nodes_;
  void ForgetFinished(Duration t);

  std::map<std::string, Job> jobs_;   // by key: active, and finished within kFinishedRetention
  std::set<std::string> forgotten_;   // finished longer ago (a late stop is still a no-op)
  Duration now_;
  bool down_ = false;
  int elastic_counter_ = 0;
};

}  // namespace gpufed::connectors::sim
