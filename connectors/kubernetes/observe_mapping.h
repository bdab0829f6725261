#pragma once
// Pure mapping from Kubernetes objects (JSON as the API returns them) to what a
// Connector reports: nodes with free whole GPUs or MIG slices, and gpufed's Jobs as
// attempts with a RunState. No I/O, so every rule is unit-testable.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "connectors/core/connector.h"
#include "connectors/kubernetes/job_builder.h"
#include "controller/model/cluster.h"

namespace gpufed::connectors::kubernetes {

// Resources requested by the non-terminated pods bound to one node.
struct NodeUsage {
  int64_t cpu_milli = 0;
  int64_t memory = 0;                          // bytes
  std::map<std::string, int64_t> extended;     // nvidia.com/gpu, nvidia.com/mig-*: count
};

// Sums pod requests by spec.nodeName (pods without a node, or Succeeded/Failed, skipped).
// Extended resources count from limits (they must equal requests).
std::map<std::string, NodeUsage> UsageByNode(const std::vector<nlohmann::json>& pods);

struct MappedNode {
  ObservedNode node;                           // pool "" when no declared pool matches
  NodeFacts facts;
  std::map<std::string, std::string> pool_selector;  // a selector that lands on this pool
};

// Maps one Node. The pool is the declared node pool named by a node-pool label
// (gpufed.io/node-pool, GKE, EKS, AKS, Karpenter), else the pool whose GPU model
// matches nvidia.com/gpu.product. Ready means the Ready condition is True and the node
// is not cordoned. GPUs: whole GPUs from nvidia.com/gpu (capacity, of which allocatable
// minus used are free); MIG ("mixed": nvidia.com/mig-<profile>, "single": nvidia.com/gpu
// with a -MIG-<profile> product) as free compute slices spread over the physical GPUs
// (nvidia.com/gpu.count, else the pool's count).
MappedNode MapNode(const nlohmann::json& node, const model::Cluster& cluster, const NodeUsage& used);

// Converts API timestamps to the caller's clock: `now` on the clock is `server_now`
// (Unix seconds, from the response's Date header) on the server.
struct TimeBase {
  Duration now;
  int64_t server_now = 0;
  Duration At(int64_t unix_seconds) const;
};

// Maps one of gpufed's Jobs and its pods to an attempt:
//   Job condition Complete=True -> succeeded; Failed=True -> failed with the condition's
//   reason and message, except that a pod disrupted by scheduler preemption makes it
//   preempted, and other disruptions (node drain, taint eviction) make it failed and
//   `lost` (not the workload's fault); deletionTimestamp set -> cancelled;
//   otherwise a Running pod -> running, else starting, with the pending pod's reason
//   (e.g. "Unschedulable: 0/4 nodes are available: ...").
// Progress is the resume point plus running time; the checkpoint is the last whole
// checkpoint interval reached (the workload checkpoints on its interval). GPU-seconds
// and cost come from the gpu-milli annotation and the pool's price per GPU-hour.
ObservedWorkload MapJob(const nlohmann::json& job, const std::vector<const nlohmann::json*>& pods,
                        const TimeBase& time, const model::Cluster& cluster,
                        const std::map<std::string, std::string>& pool_by_node);

}  // namespace gpufed::connectors::kubernetes
