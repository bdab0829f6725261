#pragma once
// The one interface between the controller and a cluster. A connector knows nothing of
// policy: it reports what the cluster has and runs what it is told, idempotently.
//
// Keys: every action names one attempt of one workload, key = "<uid>.a<attempt>".
// Connectors deduplicate on (kind, key): a repeated Submit of the same key never starts a
// second copy, a repeated Cancel is a no-op. The controller retries any action after
// any failure, so this is what makes "no submission twice" hold across crashes.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "controller/common/clock.h"
#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/common/status.h"
#include "controller/common/vocabulary.h"
#include "controller/model/workload.h"

namespace gpufed::connectors {

// Per-call settings: the deadline the connector must respect and the time source.
struct CallContext {
  const Clock* clock = nullptr;  // never null in calls from the controller
  Duration timeout = Duration::FromSeconds(10);
};

struct ObservedGpu {
  int free_milli = 1000;     // compute share left (1000 = whole GPU free)
  int64_t free_memory = 0;   // bytes
  int mig_slices_used = 0;   // of 7 compute slices, when the GPU is MIG-partitioned
};

struct ObservedNode {
  std::string name;
  std::string pool;          // the Cluster's node pool it belongs to
  bool ready = true;         // false while an elastic node is provisioning
  int64_t free_cpu_milli = 0;
  int64_t free_memory = 0;   // bytes
  std::vector<ObservedGpu> gpus;
};

enum class RunState { kStarting, kRunning, kSucceeded, kFailed, kCancelled, kPreempted };
const char* RunStateName(RunState state);
inline bool IsFinished(RunState s) { return s != RunState::kStarting && s != RunState::kRunning; }

struct ObservedWorkload {
  std::string key;           // the Submit action's key
  std::string workload;
  int attempt = 0;
  RunState state = RunState::kStarting;
  std::string reason;        // why it finished (exit code, node lost, reclaimed, ...)
  bool lost = false;         // Failed through no fault of its own (node loss, outage)
  Duration progress;         // work done, including what the attempt resumed from
  Duration checkpoint;       // progress at the last durable checkpoint (0: none)
  Duration started_at;       // cluster time the attempt started running
  Duration finished_at;
  double gpu_seconds = 0;    // metered for this attempt
  Money cost;                // metered for this attempt
};

struct Observation {
  bool healthy = true;
  std::vector<ObservedNode> nodes;           // present nodes, including provisioning ones
  std::vector<ObservedWorkload> workloads;   // attempts the cluster still knows, any state
  std::map<std::string, Money> gpu_hour;     // current price per GPU model
  // The remote API in use, for `gpufed get clusters`, a metric label and the run log;
  // empty for clusters without one (sim, local).
  std::string api_version;                   // "v0.0.42"
  std::string api_summary;                   // "slurmrestd API v0.0.42 (Slurm 24.11.5)"
  // When the cluster's state changes next without any action (a job ends, a node
  // arrives, a failure is injected). Zero when unknown (real clusters). Virtual-time
  // runners advance to the earliest of these.
  Duration next_event;
};

// The kinds of action and their names are the vocabulary's (controller/common/vocabulary.h).
using ::gpufed::ActionKind;
using ::gpufed::ActionKindName;
using ::gpufed::ParseActionKind;

// Where one gang member runs.
struct NodeAssignment {
  std::string node;          // empty when `provision_pool` adds a node for it
  std::vector<int> gpus;
  // For a node `provision_pool` adds: the name the placer gave it. Connectors that name
  // the nodes they create (sim) use it, so the cluster reports the node under the name
  // the decision bound; others (cloud autoscalers) may ignore it.
  std::string new_node_name;
};

struct Action {
  ActionKind kind = ActionKind::kSubmit;
  std::string key;           // "<uid>.a<attempt>"; see the file comment
  std::string workload;
  std::string tenant;
  int attempt = 1;
  // Submit only.
  std::string source;              // where the workload came from: "repo", "api", "scenario"
                                   // ("" in actions recorded before it was kept: unknown)
  std::vector<NodeAssignment> nodes;
  int gpu_milli_each = 1000;       // share of each listed GPU
  int64_t gpu_memory_each = 0;     // bytes of each listed GPU taken (shares, MIG)
  std::string mig_profile;
  int64_t cpu_milli = 0;           // per node
  int64_t memory_bytes = 0;        // per node
  Duration start_delay;            // data staging before it can run
  std::string provision_pool;      // grow this node pool first (elastic clusters)
  Duration duration;               // expected total runtime (the sim runs this long)
  Duration resume_from;            // progress restored from the last checkpoint
  Duration checkpoint_interval;    // 0: the workload does not checkpoint
  model::RunSpec run;
  std::string priority_class;      // the workload's priority class name ("" when numeric)
  std::string policy_revision;     // the revision whose decision this carries out
  std::string reason;              // cancel/preempt: recorded with the outcome
  // The lease epoch of the leader that applies it, when replicas share one database
  // (gpufed run --store; controller/ha); 0 for a process on its own. Connectors put it
  // beside the key on what they create (a Slurm job's comment and environment, a
  // Kubernetes annotation, a local job's environment), so an operator can tell which
  // leader's term made a job. The key, not the epoch, makes a repeated Apply harmless.
  int64_t leader_epoch = 0;
};

struct ApplyOutcome {
  bool already_applied = false;    // the key was seen before; nothing was done
};

class Connector {
 public:
  virtual ~Connector() = default;
  // Current state of the cluster. No side effects on workloads. Safe to call at any
  // time. Unavailable when the cluster does not answer.
  virtual Result<Observation> Observe(const CallContext& ctx) = 0;
  // Moves the cluster toward `action`. Idempotent by (action.kind, action.key); retried
  // after any failure. Returns quickly; results are seen on Observe. Errors:
  // Unavailable (retry with backoff), InvalidArgument (the action can never apply,
  // e.g. an unknown node), NotFound (cancel of a key the cluster never saw).
  virtual Result<ApplyOutcome> Apply(const Action& action, const CallContext& ctx) = 0;
};

}  // namespace gpufed::connectors
