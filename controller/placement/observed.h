#pragma once
// The placer's view of a cluster as its connector last reported it (Snapshot::observed).
// Plain data: the reconcile loop fills it from connector observations, audit snapshots
// carry it, replay reads it back.
#include <cstdint>
#include <string>
#include <vector>

namespace gpufed::placement {

// A node as its cluster last reported it (connectors observe them). The placer binds to
// these names, so the names a connector reports, the names decisions bind and the names
// in the journal are one vocabulary.
struct ObservedGpu {
  int free_milli = 1000;          // compute share the cluster reports free
  int64_t free_memory = -1;       // bytes free (-1: not reported; the pool's memory)
  int mig_slices_used = 0;
  bool operator==(const ObservedGpu&) const = default;
};
struct ObservedNode {
  std::string name;
  std::string pool;               // the Cluster's node pool it belongs to (unknown pools are ignored)
  bool ready = true;              // false while an elastic node is provisioning
  int64_t free_cpu_milli = -1;    // -1: not reported
  int64_t free_memory = -1;       // bytes; -1: not reported
  std::vector<ObservedGpu> gpus;  // empty: the pool's GPU count, all free
  bool operator==(const ObservedNode&) const = default;
};
// What a connector last reported about one cluster. Free capacity it reports below what
// the snapshot's running work leaves is held by something else (another scheduler's
// jobs, or work the cluster has not released yet): the placer never plans on it.
struct ObservedCluster {
  bool healthy = true;            // false: nothing fits there and nothing is provisioned
  // Why it is not healthy, as explanations quote it ("cluster unhealthy since T: last
  // error: ...", "no connector ..."); empty when healthy or not known.
  std::string down_reason;
  std::vector<ObservedNode> nodes;
  bool operator==(const ObservedCluster&) const = default;
};

}  // namespace gpufed::placement
