// gpufed: our default node-level packing policy.
//
// It keeps FGD's objective (place the pod where the expected fragmentation over
// the workload mix grows least) and changes how gradients are compared, which is
// where FGD leaves allocation on the table (measurements in bench/README.md):
//
//  * FGD compares int(100 * sigmoid(delta / 1000)). The sigmoid saturates: every
//    move that fragments more than ~4.6 GPUs' worth scores 0, so FGD cannot tell a
//    bad move from a terrible one, and its buckets widen with |delta|. gpufed ranks
//    first by the gradient in fixed 100 milli-GPU steps, which keeps the tails
//    apart.
//  * Within one step, FGD's finer score decides for unconstrained workloads.
//    When the workload names GPU models (gpu_spec), the finer score is dropped:
//    coarser steps leave more moves tied, ties go to the first node in fleet
//    order, and that first-fit consolidation keeps whole nodes of each model free
//    for the pods that can only run there (gpuspec10: +3 points at 80-95%).
//  * Inside a node, among GPUs with the same step, the larger exact gradient and
//    then the fuller GPU win (best fit), so shares stack on shared GPUs.
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

class GpufedPolicy : public FragPolicy {
 public:
  GpufedPolicy(uint64_t seed, const WorkloadDistribution& workload)
      : FragPolicy("gpufed", seed, workload, /*random_ties=*/false), model_constrained_(NamesModels(workload)) {}

 protected:
  FragVerdict Judge(const Fleet& fleet, size_t node, const PodRequest& /*pod*/,
                    const std::vector<FragMove>& moves) override {
    const NodeState& s = fleet.state(node);
    FragVerdict v;
    bool first = true;
    double best_delta = 0;
    int best_left = 0;
    for (const FragMove& m : moves) {
      // Rounded so float noise in the sums cannot split real ties.
      const double delta = std::round(m.delta * 1e6) / 1e6;
      const double fgd_score = static_cast<double>(static_cast<int64_t>(100.0 / (1.0 + std::exp(-delta / 1000.0))));
      const double score = std::floor(delta / kStepMilli) * 1000.0 + (model_constrained_ ? 0.0 : fgd_score);
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
