// gpufed: our default node-level packing policy.
//
// It keeps FGD's idea (place the pod where the expected fragmentation over the
// workload mix grows least) but removes the noise FGD's reference implementation
// adds: FGD squeezes the gradient through int(100 * sigmoid(delta / 1000)), so
// moves that differ by tens of milli-GPU score the same and the winner is drawn
// at random. gpufed ranks by the exact gradient and breaks remaining ties
// deterministically towards the fuller node (best fit), which keeps empty GPUs
// and empty nodes for the whole-GPU and multi-GPU pods that need them.
#include <cmath>

#include "controller/placement/packing/frag_policy.h"

namespace gpufed::packing::internal {
namespace {

class GpufedPolicy : public FragPolicy {
 public:
  GpufedPolicy(uint64_t seed, const WorkloadDistribution& workload) : FragPolicy("gpufed", seed, workload, false) {}

 protected:
  FragVerdict Judge(const Fleet& fleet, size_t node, const PodRequest& pod,
                    const std::vector<FragMove>& moves) override {
    const NodeState& s = fleet.state(node);
    FragVerdict v;
    bool first = true;
    int best_left = 0;
    for (const FragMove& m : moves) {
      // Quantise to 1e-6 milli so float noise in the sums cannot split real ties.
      const double score = std::round(m.delta * 1e6) / 1e6;
      const int left = m.share_gpu >= 0 ? s.gpu_left[static_cast<size_t>(m.share_gpu)] : 0;
      if (first || score > v.score || (score == v.score && left < best_left)) {
        v.score = score;
        v.share_gpu = m.share_gpu;
        best_left = left;
        first = false;
      }
    }
    // Fuller node first: less GPU then less CPU left after placement.
    const double gpu_after = static_cast<double>(s.GpuLeftTotal() - pod.TotalGpuMilli());
    const double cpu_after = static_cast<double>(s.cpu_left - pod.cpu_milli);
    v.tiebreak = -(gpu_after * 1e6 + cpu_after / 1000.0);
    return v;
  }
};

}  // namespace

std::unique_ptr<PackingPolicy> MakeGpufedPolicy(uint64_t seed, const WorkloadDistribution& workload) {
  return std::make_unique<GpufedPolicy>(seed, workload);
}

}  // namespace gpufed::packing::internal
