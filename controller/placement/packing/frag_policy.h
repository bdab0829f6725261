#pragma once
// Base of the fragmentation-driven policies (fgd, gpufed): evaluates, for each
// feasible node, how much expected fragmentation the placement removes, with
// per-node caches so that one arrival only re-evaluates nodes that changed since
// the last pod of the same shape.
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "controller/placement/packing/policy_internal.h"
#include "controller/placement/packing/workload.h"

namespace gpufed::packing::internal {

// One way to place the pod on a node, with the fragmentation it removes
// (old - new, milli-GPU; negative when fragmentation grows).
struct FragMove {
  int share_gpu = -1;
  double delta = 0;            // FGD's measure (FragmentationModel::NodeFrag)
  double delta_resources = 0;  // NodeFragResources; only with resources_measure, else 0
};

// The cached verdict on one node for one pod shape.
struct FragVerdict {
  double score = 0;      // primary, higher is better
  double tiebreak = 0;   // secondary, higher is better (ignored when ties are random)
                         // equal score and tiebreak: first node in fleet order
  int share_gpu = -1;
};

class FragPolicy : public PackingPolicy {
 public:
  // `resources_measure`: moves also carry delta_resources, the gradient of
  // FragmentationModel::NodeFragResources (CPU and memory first-class), and pod
  // shapes are cached by memory too.
  FragPolicy(std::string name, uint64_t seed, const WorkloadDistribution& workload, bool random_ties,
             bool resources_measure = false);
  std::string_view name() const override { return name_; }
  std::optional<Allocation> PlaceAmong(const Fleet& fleet, const PodRequest& pod,
                                       const std::vector<bool>* eligible) override;

 protected:
  // Turns the candidate moves on `node` (at least one) into a verdict.
  virtual FragVerdict Judge(const Fleet& fleet, size_t node, const PodRequest& pod,
                            const std::vector<FragMove>& moves) = 0;

 private:
  struct CacheEntry {
    uint64_t version_plus_one = 0;  // 0 = empty
    FragVerdict verdict;
  };
  struct FragEntry {
    uint64_t version_plus_one = 0;
    double frag = 0;
    double frag_resources = 0;
  };

  void Reset(const Fleet& fleet);
  int ShapeId(const PodRequest& pod);
  // The node's current fragmentation under both measures (second 0 without resources_measure).
  std::pair<double, double> CurrentFrag(const Fleet& fleet, size_t node);
  // A move and the fragmentation it removes under both measures (`after`: the node's
  // once the pod is placed; the second 0 without resources_measure).
  void AddMove(int share_gpu, std::pair<double, double> before, std::pair<double, double> after);
  void Moves(const Fleet& fleet, size_t node, const PodRequest& pod);

  std::string name_;
  Rng rng_;
  bool random_ties_;
  bool resources_measure_;
  WorkloadDistribution workload_;
  std::optional<FragmentationModel> model_;
  const Fleet* fleet_ = nullptr;
  // A pod shape as the cache tells shapes apart (FGD's measure ignores memory, so shapes
  // differing only in memory share entries; the resources measure does not): the pod's
  // numbers, normalised, and its allowed models.
  struct ShapeNumbers {
    int64_t cpu_milli = 0;
    int64_t memory_mib = 0;  // 0 without resources_measure
    int gpu_milli = 0;       // 0 for a pod without GPUs
    int num_gpu = 0;         // 0 for a pod without GPUs
    bool operator==(const ShapeNumbers&) const = default;
  };
  struct ShapeKey {
    ShapeNumbers numbers;
    std::vector<std::string> allowed_models;
  };
  ShapeNumbers NumbersOf(const PodRequest& pod) const;
  static uint64_t HashOf(const ShapeNumbers& numbers, const std::vector<std::string>& allowed_models);
  std::vector<ShapeKey> shapes_;  // by shape id
  // Shape ids by HashOf, once there are more than a scan should check (a trace replay
  // sees thousands of shapes; a plan's cluster tens).
  std::unordered_multimap<uint64_t, int> shape_ids_;
  int last_shape_ = -1;           // ShapeId's last answer (-1: none)
  std::vector<std::vector<CacheEntry>> cache_;  // [shape][node]
  std::vector<FragEntry> frag_;                 // [node]
  std::vector<FragMove> moves_;                 // scratch
  FragmentationModel::NodeView view_;           // scratch: the node a share's moves start from
  std::vector<int> scratch_gpus_;
};

}  // namespace gpufed::packing::internal
