#pragma once
// The target workload distribution and GPU fragmentation (FGD, Weng et al.,
// USENIX ATC'23). Fragmentation of a node for one typical pod is the GPU milli
// that pod could not use there: all that is left when the pod cannot run on the
// node at all (wrong model, CPU short, not enough GPUs with room), otherwise the
// milli on GPUs too small for it. The expected fragmentation weighs typical pods
// by their frequency in the workload.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "controller/placement/packing/fleet.h"

namespace gpufed::packing {

struct TypicalPod {
  int64_t cpu_milli = 0;
  int gpu_milli = 0;  // per GPU; 0 for CPU-only pods
  int num_gpu = 0;
  std::vector<std::string> allowed_models;
  double weight = 0;  // frequency in [0, 1]; weights of a distribution sum to 1
};

class WorkloadDistribution {
 public:
  WorkloadDistribution() = default;
  explicit WorkloadDistribution(std::vector<TypicalPod> pods) : pods_(std::move(pods)) {}

  // Counts pod shapes (CPU, GPU milli, GPU count, allowed models; not memory, as
  // the reference simulator does) and keeps the most frequent shapes until they
  // cover `coverage` of the pods, then renormalises. CPU-only pods are included.
  static WorkloadDistribution FromPods(std::span<const PodRequest> pods, double coverage = 0.95);

  const std::vector<TypicalPod>& pods() const { return pods_; }
  bool empty() const { return pods_.empty(); }

 private:
  std::vector<TypicalPod> pods_;
};

// The distribution resolved against one fleet's model ids, sorted for fast
// evaluation. Build once per fleet (models never change after Fleet::Create).
class FragmentationModel {
 public:
  FragmentationModel(const WorkloadDistribution& dist, const Fleet& fleet);

  // Expected fragmented GPU milli of a node in the given (possibly hypothetical) state.
  double NodeFrag(int model_id, int64_t cpu_left, std::span<const int> gpu_left) const;

 private:
  struct Entry {
    int64_t cpu_milli;
    int gpu_milli;
    int num_gpu;
    uint64_t model_mask;
    double weight;
  };
  std::vector<Entry> entries_;
  double cpu_only_weight_ = 0;  // CPU-only typical pods count every idle GPU milli
};

}  // namespace gpufed::packing
