#pragma once
// Node-level GPU packing policies: given a fleet and one pod, choose a node and
// the GPUs on it. Policies never modify the fleet; the caller applies the
// returned allocation (Fleet::Apply) or drops the pod.
//
// Names accepted by MakePackingPolicy:
//   random      a uniformly random feasible node (seeded)
//   firstfit    the first feasible node in fleet order
//   bestfit     least CPU + GPU left after placement (FGD paper baseline)
//   dotprod     Tetris-style dot product of free and requested resources
//   packing     GPU packing: shared GPUs, then used nodes, then idle nodes
//   clustering  GPU clustering: nodes already running the same kind of pod
//   fgd         Fragmentation Gradient Descent (Weng et al., USENIX ATC'23)
//   gpufed      our default: FGD's objective with CPU and memory first-class in the
//               fragmentation measure, compared in fixed steps without saturation,
//               refined by FGD's score, first-fit ties
// The baselines follow the FGD authors' simulator, including its integer scores
// (0..100) and random choice among equally scored nodes, so that results are
// comparable with the published ones.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/common/status.h"
#include "controller/placement/packing/fleet.h"
#include "controller/placement/packing/workload.h"

namespace gpufed::packing {

class PackingPolicy {
 public:
  virtual ~PackingPolicy() = default;
  virtual std::string_view name() const = 0;

  // Chooses where `pod` goes among the nodes of `fleet` where it fits now, or
  // nullopt when it fits nowhere. The result always passes Fleet::Apply for this
  // fleet state. A policy may keep caches keyed by node versions and draws from
  // its own seeded generator, so one policy object serves one fleet at a time and
  // is not thread-safe; the same seed, fleet and pod sequence give the same choices.
  std::optional<Allocation> Place(const Fleet& fleet, const PodRequest& pod) { return PlaceAmong(fleet, pod, nullptr); }

  // Place, among the nodes flagged in `eligible` (one flag per node; null: every node).
  // For callers that know constraints the fleet does not model: the placer passes the
  // nodes whose GPU memory and MIG geometry also have room (placement/node_packer.h).
  virtual std::optional<Allocation> PlaceAmong(const Fleet& fleet, const PodRequest& pod,
                                               const std::vector<bool>* eligible) = 0;
};

// The names above, in the order used for reports.
const std::vector<std::string>& PackingPolicyNames();

// InvalidArgument for an unknown name. `workload` is the expected pod mix; only
// fgd and gpufed use it (an empty distribution makes them plain best-fit-like).
Result<std::unique_ptr<PackingPolicy>> MakePackingPolicy(std::string_view name, uint64_t seed,
                                                         const WorkloadDistribution& workload);

}  // namespace gpufed::packing
