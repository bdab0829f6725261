#pragma once
// Free capacity of every cluster, node and GPU, as the placer sees it during one plan.
// Reservations are made as the plan proceeds, so one plan never over-commits.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/model/cluster.h"
#include "controller/model/mig_profile.h"
#include "controller/model/workload.h"
#include "controller/placement/mig.h"
#include "controller/placement/observed.h"

namespace gpufed::placement {

class NodePacker;

inline constexpr int kMilliPerGpu = 1000;
inline constexpr int kMigComputeSlices = model::kMigComputeSlicesPerGpu;

struct GpuState {
  int free_milli = kMilliPerGpu;  // compute share left
  int64_t free_memory = 0;        // bytes left
  int mig_slices_used = 0;        // compute slices of MIG instances on this GPU
  MigLayout mig;                  // occupied memory slices, for models with a MIG table
  bool shared = false;            // holds fractional work (memory share or MIG)
  bool operator==(const GpuState&) const = default;
};

struct NodeState {
  std::string name;
  int pool = 0;                   // index into the cluster's node pools
  int64_t free_cpu_milli = 0;
  int64_t free_memory = 0;
  bool cpu_limited = true;        // false when the pool does not declare CPU/memory
  bool provisioned = false;       // added on demand by elasticity (not yet running)
  std::vector<GpuState> gpus;

  int FreeWholeGpus() const;
  bool operator==(const NodeState&) const = default;
};

struct ClusterState {
  const model::Cluster* cluster = nullptr;
  std::vector<NodeState> nodes;
  int elastic_nodes_left = 0;     // nodes elasticity may still add
  int next_node_index = 0;        // suffix of the next elastic node's name
  // nodes_with_free[k]: nodes with at least k whole GPUs free. A cheap upper bound that
  // lets a plan skip node scans for whole-GPU requests that cannot fit; rebuilt lazily
  // after Reserve/Release mark it stale.
  mutable std::vector<int> nodes_with_free;
  mutable bool index_stale = true;
  // Bumped by every change to the nodes (Reserve, Release, added nodes), so a result
  // computed from this state (the placer's fit cache) knows when it is stale.
  uint64_t generation = 0;
  // Picks among the nodes that fit (node_packer.h). BuildClusterState gives every state
  // one that knows no pod mix; the placer replaces it with one that knows the plan's.
  // Copies (trial states) share it: it mirrors whichever state it is asked about.
  std::shared_ptr<NodePacker> packer;

  int FindNodeIndex(const std::string& name) const;  // -1 when absent
};

// The same nodes (names, pools, in order) with the same free capacity and the same room
// to grow: whatever is computed from one state holds for the other (generation, packer
// and derived indexes aside).
bool SameCapacity(const ClusterState& a, const ClusterState& b);

// How a request maps onto one node: which GPUs and how much of each.
struct NodeFit {
  std::vector<int> gpus;          // GPU indices on the node
  int milli_each = kMilliPerGpu;  // share of each listed GPU
  int64_t memory_each = 0;        // GPU memory of each listed GPU
  std::string mig_profile;        // when placed as a MIG instance
  int mig_start = -1;             // its first memory slice (-1: unknown or no MIG table)
  double packing = 0;             // 0..1: how tightly the node is used afterwards
  int waste_milli = 0;            // GPU share taken beyond what was asked (a whole GPU for 4Gi)

  // 0..1, higher is better: tight packing that wastes little of what it takes.
  double Quality() const { return FitQuality(packing, waste_milli); }
  static double FitQuality(double packing, int waste_milli) { return packing * (1.0 - waste_milli / 1000.0); }
};

// A request normalised against one node pool: what it takes on each GPU.
struct GpuDemand {
  int gpus = 0;                   // GPUs per node
  int milli_each = kMilliPerGpu;
  int64_t memory_each = 0;
  std::string mig_profile;
  // mig_profile's slice geometry on the pool's GPU model (FindMigProfile), found once by
  // DemandOn rather than for every node asked; null when the model has no MIG table.
  const MigProfile* mig_geometry = nullptr;
  int mig_slices = 0;
  bool fractional = false;
  int needed_milli = kMilliPerGpu;  // what the request really uses of each GPU
};

// The GPU share a demand gives beyond what the request uses (a whole GPU for a fraction
// on an unshared pool; NodeFit::waste_milli).
int WasteOf(const GpuDemand& demand);

// True for a request whose GPUs may be spread over several nodes of one pool (see
// search.h): topology any, whole GPUs, more than one, not a multi-node gang (a gang's
// shape is fixed). Its GPUs need not fit on one node.
bool Spreads(const model::ResourceRequest& request);

// Why a pool's shape can never serve the request (empty when it can, when empty).
std::string PoolShapeMismatch(const model::NodePool& pool, const model::ResourceRequest& request);
// PoolShapeMismatch(...).empty(), without building the reason.
bool PoolShapeFits(const model::NodePool& pool, const model::ResourceRequest& request);
// The per-GPU demand on `pool`; requires PoolShapeMismatch(...) to be empty.
GpuDemand DemandOn(const model::NodePool& pool, const model::ResourceRequest& request);
// A request's demand on each pool of a cluster: set for the pools `pool_allowed` leaves
// whose shape fits (PoolShapeFits), empty for the rest.
using PoolDemands = std::vector<std::optional<GpuDemand>>;
PoolDemands DemandsOn(const model::Cluster& cluster, const model::ResourceRequest& request,
                      const std::vector<bool>& pool_allowed);

// The cluster's nodes: the declared node pools (nodes "<pool>-<i>"), or, when `observed`
// is given, the nodes its connector reported, under their names (nodes of a pool the
// Cluster does not declare are left out: nothing can be said about their shape). An
// unhealthy observed cluster has no nodes and may not grow.
ClusterState BuildClusterState(const model::Cluster& cluster, const ObservedCluster* observed = nullptr);
// Lowers each node's free capacity to what the cluster reported free (call after the
// running work is reserved): capacity it reports in use beyond what the running work
// holds belongs to someone else, and a plan must not count on it.
void CapToObserved(ClusterState& state, const ObservedCluster& observed);

// The node fit for a single-node request: among the nodes FitOnNode finds room on, the
// one the state's packing policy picks (node_packer.h); `only_node` >= 0 looks at that
// node alone. `demands`: DemandsOn(state's cluster, request, pool_allowed) when the caller
// keeps it (the placer's shape classes do), else worked out here.
std::optional<std::pair<int, NodeFit>> FindNode(const ClusterState& state, const model::ResourceRequest& request,
                                                const std::vector<bool>& pool_allowed, int only_node = -1,
                                                const PoolDemands* demands = nullptr);
// The node FindNode takes, before its fit is built: the node, the demand on its pool,
// and the GPU the packing policy chose for a share (-1: none). `demands` as for FindNode,
// but required (the choice points into it).
struct NodeChoice {
  int node = -1;
  const GpuDemand* demand = nullptr;
  int share_gpu = -1;
};
std::optional<NodeChoice> ChooseNode(const ClusterState& state, const model::ResourceRequest& request,
                                     int only_node, const PoolDemands& demands);
// FitOnNode(...)->Quality() on a node where it fits: the quality does not depend on which
// GPUs the fit takes, so the placer's fit cache needs no fit built to rank a cluster.
double FitQualityOn(const NodeState& node, const model::NodePool& pool, const GpuDemand& demand);
// How `demand` fits on `node` (a node of `pool`), keeping whole GPUs free: fractions go
// to the fullest shared GPU with room (to GPU `only_gpu` alone when >= 0), whole GPUs take
// the lowest free indices.
std::optional<NodeFit> FitOnNode(const NodeState& node, const model::NodePool& pool, const GpuDemand& demand,
                                 const model::ResourceRequest& request, int only_gpu = -1);
// Adds one node of the first allowed pool whose shape fits, if elasticity allows.
std::optional<int> ProvisionNode(ClusterState& state, const model::ResourceRequest& request,
                                 const std::vector<bool>& pool_allowed);
void Reserve(ClusterState& state, int node, const NodeFit& fit, const model::ResourceRequest& request);
// Undoes a Reserve with the same arguments (preemption frees a running workload).
void Release(ClusterState& state, int node, const NodeFit& fit, const model::ResourceRequest& request);
// False only when a whole-GPU request surely cannot fit on the nodes present (ignores
// pools, CPU and memory, so true does not promise a fit). Elastic growth is not counted.
bool MayFitWholeGpus(const ClusterState& state, const model::ResourceRequest& request);
// Adds a node an earlier plan provisioned (named "<pool>-<n>") so running work bound to
// it can be reserved; returns its index, or nothing when no pool matches the name or
// elasticity is exhausted.
std::optional<int> AddObservedNode(ClusterState& state, const std::string& name);
// The NodeFit that reproduces a binding's use of one node (for Reserve/Release).
NodeFit FitOfBinding(const model::NodePool& pool, const model::ResourceRequest& request, const std::vector<int>& gpus,
                     int gpu_milli_each, const std::string& mig_profile, int mig_start = -1);


}  // namespace gpufed::placement
