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
  int64_t memory_mib = 0;  // mean memory of the pods of this shape; 0 = not known
};

class WorkloadDistribution {
 public:
  WorkloadDistribution() = default;
  // `covering_gpu_demand` defaults to `pods` itself.
  explicit WorkloadDistribution(std::vector<TypicalPod> pods, std::vector<TypicalPod> covering_gpu_demand = {})
      : pods_(std::move(pods)), covering_gpu_demand_(std::move(covering_gpu_demand)) {
    if (covering_gpu_demand_.empty()) covering_gpu_demand_ = pods_;
  }

  // Counts pod shapes (CPU, GPU milli, GPU count, allowed models; not memory, as
  // the reference simulator does) and keeps the most frequent shapes until they
  // cover `coverage` of the pods, then renormalises. CPU-only pods are included.
  // Also builds CoveringGpuDemand() with the same `coverage`.
  static WorkloadDistribution FromPods(std::span<const PodRequest> pods, double coverage = 0.95);
  // The same, with pods[i] standing for counts[i] pods (counts.size() == pods.size()):
  // for callers that have already grouped equal requests (the placer's plan mix).
  static WorkloadDistribution FromPodCounts(std::span<const PodRequest> pods, std::span<const int64_t> counts,
                                            double coverage = 0.95);

  const std::vector<TypicalPod>& pods() const { return pods_; }
  bool empty() const { return pods_.empty(); }

  // FGD's typical pods plus, largest GPU demand (count x GPUs) first, the shapes it
  // takes for the set to cover `coverage` of the GPU demand too; weights are still pod
  // frequencies, renormalised over the larger set. FGD's cut is by pod count, so the
  // rare multi-GPU shapes fall out (openb default: 75 of 8,152 pods, but 7 % of the
  // GPUs asked for), and with them any reason to keep a node's GPUs whole. Allocation
  // is counted in GPUs, so gpufed covers both.
  WorkloadDistribution CoveringGpuDemand() const { return WorkloadDistribution(covering_gpu_demand_); }

 private:
  std::vector<TypicalPod> pods_;
  std::vector<TypicalPod> covering_gpu_demand_;
};

// The distribution resolved against one fleet's model ids, sorted for fast
// evaluation. Build once per fleet (models never change after Fleet::Create).
class FragmentationModel {
 public:
  FragmentationModel(const WorkloadDistribution& dist, const Fleet& fleet);

  // Expected fragmented GPU milli of a node in the given (possibly hypothetical) state:
  // FGD's measure. CPU counts only as a yes/no (a typical pod whose CPU does not fit
  // finds every GPU milli fragmented); memory not at all.
  double NodeFrag(int model_id, int64_t cpu_left, std::span<const int> gpu_left) const;

  // The same expectation with CPU and memory first-class. For each typical pod, the GPU
  // milli it could use on the node is the least of three capacities, each counted in
  // whole copies of the pod: GPU (FGD's: the milli on GPUs with room for it), CPU
  // (floor(cpu_left / its CPU) copies x its GPU) and memory (likewise). What is left
  // over is fragmented for that pod. Where CPU and memory are plentiful this is FGD's
  // measure exactly; FGD's yes/no CPU check is the zero-copy case. So a placement that
  // strands a node's GPUs by eating the CPU or memory their pods would need counts as
  // fragmentation in proportion to the GPUs stranded, not only once the last typical
  // pod stops fitting.
  double NodeFragResources(int model_id, int64_t cpu_left, int64_t memory_left, std::span<const int> gpu_left) const;

  // A node's GPUs as each typical pod sees them: the base from which moves that change
  // one GPU each are measured in one step per typical pod (a policy weighs every GPU of
  // a node for a share), instead of a pass over the GPUs per pod and move.
  struct NodeView {
    int64_t total = 0;                // milli left on the node's GPUs
    std::vector<int> fitting;         // by typical pod: GPUs with room for it
    std::vector<int64_t> too_small;   // by typical pod: milli on GPUs without
  };
  void View(std::span<const int> gpu_left, NodeView& view) const;
  // NodeFrag and NodeFragResources of the node `base` was taken of, with one GPU's milli
  // left changed from `from` to `to`: the same sums, to the last bit.
  double NodeFragAfter(int model_id, int64_t cpu_left, const NodeView& base, int from, int to) const;
  double NodeFragResourcesAfter(int model_id, int64_t cpu_left, int64_t memory_left, const NodeView& base, int from,
                                int to) const;

 private:
  struct Entry {
    int64_t cpu_milli;
    int gpu_milli;
    int num_gpu;
    uint64_t model_mask;
    double weight;
    int64_t memory_mib;
  };
  // What one typical pod finds on a node: GPUs with room for it, and the milli on the rest.
  struct GpuCounts {
    int fitting = 0;
    int64_t too_small = 0;
  };
  static GpuCounts CountFor(int gpu_milli, std::span<const int> gpu_left);
  static GpuCounts CountAfter(GpuCounts base, int gpu_milli, int from, int to);
  // The two measures from each typical pod's counts (`counts(i)` for entries_[i]), in
  // the order of entries_: one home for each sum, whichever way the counts were found.
  template <typename Counts>
  double FragOf(int model_id, int64_t cpu_left, int64_t total, Counts counts) const;
  template <typename Counts>
  double FragResourcesOf(int model_id, int64_t cpu_left, int64_t memory_left, int64_t total, Counts counts) const;
  std::vector<Entry> entries_;
  double cpu_only_weight_ = 0;  // CPU-only typical pods count every idle GPU milli
};

}  // namespace gpufed::packing
