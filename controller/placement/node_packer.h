#pragma once
// Node and GPU choice inside one cluster, for `gpufed run`, `gpufed plan` and every
// what-if alike.
//
// The placer decides which nodes can take a request at all (pool, shape, CPU, memory,
// GPU memory, MIG geometry: FitOnNode). Among those, the packing library's policy
// (packing/policy.h; gpufed by default) picks the node and, for a share, the GPU. That is
// the code `gpufed-replay openb` measures against FGD, so the replayed policy and the
// product's are one: the packer keeps a packing::Fleet that mirrors the plan's
// ClusterState and asks the policy on it.
//
// The policy's typical pod shapes come from the work the plan sees (pending and running
// requests, each in the shape it takes on this cluster's first pool that can hold it), so
// no weight is tuned by hand: the fragmentation it avoids is fragmentation for the pods
// this federation actually runs.
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "controller/common/status.h"
#include "controller/model/cluster.h"
#include "controller/model/workload.h"
#include "controller/placement/packing/fleet.h"
#include "controller/placement/packing/policy.h"

namespace gpufed::placement {

struct ClusterState;
struct GpuDemand;

// The packing policy the product uses unless told otherwise.
inline constexpr std::string_view kDefaultPackingPolicy = "gpufed";

// One node the placer found room on, with the demand the request makes on its pool.
struct PackingCandidate {
  int node = 0;        // index into ClusterState::nodes
  const GpuDemand* demand = nullptr;
};

// The policy's pick among the candidates.
struct PackingChoice {
  size_t candidate = 0;  // index into the candidates given
  int share_gpu = -1;    // the GPU the policy chose for a share (-1: not a share)
};

// The requests a plan sees (pending and running), equal ones grouped: 100,000 workloads
// are a few hundred shapes, and each cluster's packer reads the shapes, not the workloads.
class PodMix {
 public:
  struct Shape {
    model::ResourceRequest request;  // a copy of the first one's: packers kept between plans outlive the workloads
    int64_t count = 0;
  };
  void Add(const model::ResourceRequest& request, int64_t count = 1);
  // What makes two requests one shape of the mix.
  static std::string KeyOf(const model::ResourceRequest& request);
  const std::vector<Shape>& shapes() const { return shapes_; }
  // Equal for mixes of the same shapes with the same counts in the same order (the
  // order the packers' distributions see).
  uint64_t Fingerprint() const;

 private:
  std::unordered_map<std::string, size_t> index_;
  std::vector<Shape> shapes_;
  std::vector<const std::string*> keys_;  // by shape: its key in index_
};

// The request as a packing pod on a pool with `demand` (memory rounded down to MiB on both
// sides, so a node the placer finds room on is one the fleet finds room on).
packing::PodRequest PodFor(const model::ResourceRequest& request, const GpuDemand& demand);

class NodePacker {
 public:
  // InvalidArgument for an unknown policy name. `mix`: the requests the plan sees (null:
  // none); the typical pods are derived from it when the packer is first asked.
  static Result<std::shared_ptr<NodePacker>> Create(const model::Cluster& cluster, std::string_view policy,
                                                    std::shared_ptr<const PodMix> mix);

  // Which candidate the policy takes for `request` on `state` (whose cluster this packer
  // was made for). Candidates are in node order; nullopt only when `candidates` is empty.
  std::optional<PackingChoice> Choose(const ClusterState& state, const model::ResourceRequest& request,
                                      std::span<const PackingCandidate> candidates);

  std::string_view policy_name() const { return policy_name_; }

  // The plan's own state of this cluster (the placer's, at a stable address). Every change
  // to it bumps its generation, so asking about it again at the same generation needs no
  // sync; trial copies are synced in full each time. Called again when the state at that
  // address was rebuilt (a memo keeps packers between plans): its nodes are compared by
  // name once more.
  void SetHome(const ClusterState* home) {
    home_ = home;
    synced_home_ = false;
    home_nodes_checked_ = false;
  }

 private:
  NodePacker(std::string policy_name, std::shared_ptr<const PodMix> mix)
      : policy_name_(std::move(policy_name)), mix_(std::move(mix)) {}
  // Makes the fleet mirror `state`: rebuilt (with a fresh policy, whose caches belonged to
  // the old fleet) when the nodes differ, else synced node by node.
  Status Sync(const ClusterState& state);

  std::string policy_name_;
  std::shared_ptr<const PodMix> mix_;
  std::optional<packing::WorkloadDistribution> workload_;  // from mix_, on first use
  std::optional<packing::Fleet> fleet_;
  std::vector<std::string> fleet_nodes_;  // node names the fleet was built for
  std::unique_ptr<packing::PackingPolicy> policy_;
  const ClusterState* home_ = nullptr;
  bool synced_home_ = false;              // the fleet mirrors home_ at synced_generation_
  bool home_nodes_checked_ = false;       // home_'s node names were compared with the fleet's
  uint64_t synced_generation_ = 0;
  std::vector<bool> eligible_;            // scratch, one flag per node
  std::vector<int> gpu_left_;             // scratch
  // Choose's scratch: candidates of one pool demand ask for one pod, and equal pods
  // (with equal waste) are one group the policy is asked about.
  struct ChoiceGroup {
    packing::PodRequest pod;
    int waste = 0;
  };
  std::vector<const GpuDemand*> scratch_demands_;
  std::vector<size_t> scratch_group_of_demand_;
  std::vector<ChoiceGroup> scratch_groups_;
  std::vector<size_t> scratch_group_of_;
};

}  // namespace gpufed::placement
