#pragma once
// The one place that turns what the controller knows into the placer's full Snapshot:
// the active revision, every cluster's observed inventory and health, running and placed
// work with its exact binding, pending work with its submission time, decayed fair-share
// usage and budget spend. `gpufed run` plans on it, `gpufed plan --state` reads a stopped
// controller's state through it, and the audit journal records what it built, so replay
// re-runs the placer on exactly these inputs.
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "connectors/core/connector.h"
#include "controller/placement/fair_share.h"
#include "controller/placement/plan.h"
#include "controller/placement/snapshot_builder.h"
#include "controller/placement/tenant_spend.h"
#include "controller/store/records.h"
#include "policies/engine/activation.h"

namespace gpufed::reconcile {

// An observation's workloads by action key. A pass looks up every active workload in its
// cluster's report; a scan of the report for each was quadratic in the running work.
// Holds positions, not pointers, so a copy of its owner stays valid.
class ObservedWorkloads {
 public:
  void Index(const connectors::Observation& observation);
  // The workload of `observation` (the one indexed last) with this key; null when none.
  const connectors::ObservedWorkload* Find(const connectors::Observation& observation, const std::string& key) const;

 private:
  std::unordered_map<std::string, size_t> at_;
};

// What a connector last told the loop about one cluster.
struct ClusterKnowledge {
  bool healthy = false;             // answering (within the unhealthy grace period)
  bool observed = false;            // at least one successful observation
  const connectors::Observation* last = nullptr;  // the last successful one (null: none)
  const ObservedWorkloads* workloads = nullptr;   // `last`'s workloads by key (null: scan)
  std::string down_reason;          // when not healthy: why, as explanations quote it
};

// Bindings as parsed from the store's JSON, remembered between passes: running work keeps
// its binding for the life of an attempt, and parsing hundreds of them every pass was a
// twentieth of a pass. Keyed by the exact text, so a changed binding is parsed again.
class BindingCache {
 public:
  const placement::Binding& Of(const std::string& binding_json);
  // Forgets the bindings not read since the last call (memory follows the running work).
  void Sweep();

 private:
  struct Entry {
    placement::Binding binding;
    bool used = true;
  };
  std::unordered_map<std::string, Entry> entries_;
};

struct SnapshotSources {
  const policy::Revision* revision = nullptr;
  Duration now;
  std::map<std::string, ClusterKnowledge> clusters;     // by cluster name
  // Every workload that waits or holds capacity (store states Pending/Queued/Requeued
  // and Placed/Running); others are ignored.
  std::vector<store::WorkloadRecord*> records;
  // The spec of a record under the active revision (null: it has none).
  std::function<const model::Workload*(const store::WorkloadRecord&)> spec_of;
  // Metered cost booked since the earliest current budget period began
  // (MeteredThisPeriod, budget_watch.h); the spend function keeps each tenant's period.
  std::vector<placement::MeteredSpend> metered;
  const placement::FairShareLedger* fair_share = nullptr;   // may be null (no history)
  BindingCache* bindings = nullptr;                         // may be null (parsed each time)
};

// A snapshot and the records behind it. The snapshot points into the specs `spec_of`
// returned, so it is valid while those are.
struct PassSnapshot {
  placement::Snapshot snapshot;
  std::map<std::string, store::WorkloadRecord*> pending;  // by QualifiedName
  std::map<std::string, store::WorkloadRecord*> running;  // by QualifiedName
};

// Converts a connector's node report into the placer's vocabulary (same names).
placement::ObservedCluster ToObservedCluster(const ClusterKnowledge& knowledge);

// Builds the snapshot (through placement::BuildSnapshot, the one builder). Running work is
// listed with the binding the store keeps for its current attempt; its GPUs in use are
// counted by the placer, so TenantUsage carries only spend (placement/tenant_spend.h:
// declared, metered this period, the estimates of active attempts) and decayed GPU-hours.
PassSnapshot BuildSnapshot(const SnapshotSources& src);

}  // namespace gpufed::reconcile
