// gpufed: our default node-level packing policy.
//
// It keeps FGD's objective (place the pod where the expected fragmentation over the
// workload mix grows least) and changes three things, each for a reason measured on
// the openb mixes (bench/README.md):
//
//  1. What counts as fragmented: the resources measure
//     (FragmentationModel::NodeFragResources), FGD's expectation with CPU and memory
//     first-class. FGD sees CPU only once the last typical pod stops fitting, so it
//     happily spends the CPU that a node's free GPUs would need; on CPU-heavy mixes
//     that is where it lost (and where the cluster runs out of CPU before GPUs, as in
//     cpu300, it is most of the game). Where CPU and memory are plentiful the two
//     measures agree.
//
//  2. Which typical pods: FGD keeps the most frequent shapes covering 95 % of the
//     pods; gpufed also keeps the shapes it takes to cover 95 % of the GPU demand
//     (WorkloadDistribution::CoveringGpuDemand: the same 95 %, applied to what the
//     allocation metric counts). Otherwise the rare multi-GPU shapes drop out and
//     nothing in the measure values a node's GPUs kept whole.
//
//  3. How gradients compare. FGD ranks int(100 * sigmoid(delta / 1000)): the
//     sigmoid saturates (every move that fragments more than ~4.6 GPUs' worth
//     scores 0) and its buckets widen with |delta|. gpufed ranks by the gradient in
//     fixed 100 milli-GPU steps (a tenth of a GPU, kept from the earlier policy;
//     alternatives measured in bench/README.md), which keeps the tails apart, and
//     within a step by FGD's score of the resources gradient. The step is taken on
//     the worse of the two gradients (FGD's and the resources measure's): the
//     resources measure sees CPU and memory but judges memory by each shape's mean,
//     FGD's is exact on the GPU side, and a move either of them calls fragmenting is
//     ranked as such. Stepping on the resources gradient alone drains idle nodes that
//     multi-GPU pods need (multi-GPU-heavy mixes 0.25-0.31 below FGD, bench/README.md).
//     When the workload names GPU models (gpu_spec), steps are not refined at all:
//     coarser steps leave more moves tied, ties go to the first node in fleet order,
//     and that first-fit consolidation keeps whole nodes of each model free for the
//     pods that can only run there (gpuspec10: +3 to +4 points at 80-95 % arrived).
//
// Remaining ties: inside a node, the larger exact FGD gradient and then the fuller GPU
// (best fit, so shares stack); across nodes, the first in fleet order. There is no
// randomness: the seed is unused.
#include <algorithm>
#include <cmath>

#include "controller/placement/packing/frag_policy.h"

namespace gpufed::packing::internal {
namespace {

constexpr double kStepMilli = 100;

bool NamesModels(const WorkloadDistribution& workload) {
  for (const TypicalPod& t : workload.pods()) {
    if (!t.allowed_models.empty()) return true;
  }
  return false;
}

// FGD's node score: int(100 * sigmoid(delta / 1000)), truncated as Go's int64() does.
double FgdScore(double delta) { return static_cast<double>(static_cast<int64_t>(100.0 / (1.0 + std::exp(-delta / 1000.0)))); }

// Rounded so float noise in the sums cannot split real ties.
double Rounded(double delta) { return std::round(delta * 1e6) / 1e6; }

class GpufedPolicy : public FragPolicy {
 public:
  GpufedPolicy(uint64_t seed, const WorkloadDistribution& workload)
      : FragPolicy("gpufed", seed, workload.CoveringGpuDemand(), /*random_ties=*/false, /*resources_measure=*/true),
        model_constrained_(NamesModels(workload)) {}

 protected:
  FragVerdict Judge(const Fleet& fleet, size_t node, const PodRequest& /*pod*/,
                    const std::vector<FragMove>& moves) override {
    const NodeState& s = fleet.state(node);
    FragVerdict v;
    bool first = true;
    double best_delta = 0;
    int best_left = 0;
    for (const FragMove& m : moves) {
      const double delta = Rounded(m.delta);
      const double delta_resources = Rounded(m.delta_resources);
      const double refine = model_constrained_ ? 0.0 : FgdScore(delta_resources);  // 0..100, below one step
      const double score = std::floor(std::min(delta, delta_resources) / kStepMilli) * 1000.0 + refine;
      const int left = m.share_gpu >= 0 ? s.gpu_left[static_cast<size_t>(m.share_gpu)] : 0;
      if (first || score > v.score ||
          (score == v.score && (delta > best_delta || (delta == best_delta && left < best_left)))) {
        v.score = score;
        v.share_gpu = m.share_gpu;
        best_delta = delta;
        best_left = left;
        first = false;
      }
    }
    v.tiebreak = 0;  // equal scores: first node in fleet order
    return v;
  }

 private:
  bool model_constrained_;
};

}  // namespace

std::unique_ptr<PackingPolicy> MakeGpufedPolicy(uint64_t seed, const WorkloadDistribution& workload) {
  return std::make_unique<GpufedPolicy>(seed, workload);
}

}  // namespace gpufed::packing::internal
