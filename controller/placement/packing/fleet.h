#pragma once
// A small, pure model of GPU nodes for node-level packing decisions.
//
// GPUs are tracked per device in milli-GPU (1000 = one whole GPU). A pod either
// shares one GPU (gpu_milli < 1000, num_gpu == 1) or takes num_gpu whole GPUs on
// one node. CPU (milli-cores) and memory (MiB) must fit too. The model has no
// clock, no I/O and no randomness: policies and callers own those.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "controller/common/status.h"

namespace gpufed::packing {

inline constexpr int kMilliPerGpu = 1000;
// Model ids are bits of a 64-bit mask; a fleet with more distinct models is refused.
inline constexpr int kMaxModels = 64;

struct NodeSpec {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  std::string model;  // empty for CPU-only nodes
};

struct PodRequest {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int gpu_milli = 0;  // per GPU; < 1000 means a share of one GPU (then num_gpu == 1)
  std::vector<std::string> allowed_models;  // empty = any model

  bool NeedsGpu() const { return num_gpu > 0 && gpu_milli > 0; }
  bool IsShared() const { return NeedsGpu() && gpu_milli < kMilliPerGpu; }
  int64_t TotalGpuMilli() const { return NeedsGpu() ? int64_t{num_gpu} * gpu_milli : 0; }
};

// InvalidArgument when the request is not one of the shapes above (negative
// numbers, a share spread over several GPUs, more than 1000 milli per GPU).
Status ValidatePodRequest(const PodRequest& pod);

// The GPUs (device indices on `node`) given to a pod, each with gpu_milli_each.
struct Allocation {
  size_t node = 0;
  std::vector<int> gpus;
  int gpu_milli_each = 0;
  // The policy's score of the chosen node (higher is better). Comparable between the
  // choices of one policy on one fleet, e.g. of the same pod on different GPU sizes.
  double score = 0;
};

// Affinity tag used by GPU clustering: 0 for shared pods, k for k whole GPUs,
// -1 for pods without GPUs (not counted).
int AffinityTag(const PodRequest& pod);

struct NodeState {
  int64_t cpu_left = 0;
  int64_t memory_left = 0;
  std::vector<int> gpu_left;     // milli left per device, index = device index
  std::map<int, int> affinity;   // AffinityTag -> number of pods on the node
  uint64_t version = 0;          // bumped on every Apply/Release touching this node

  int64_t GpuLeftTotal() const;
  int FullyFreeGpus() const;
};

// A set of nodes and what is allocated on them. Node order is the caller's
// order (policies such as first-fit depend on it). Not thread-safe; copy it to
// run independent simulations in parallel.
class Fleet {
 public:
  // InvalidArgument for negative capacities, GPUs without a model, or more than
  // kMaxModels distinct models.
  static Result<Fleet> Create(std::vector<NodeSpec> nodes);

  size_t size() const { return specs_.size(); }
  const NodeSpec& spec(size_t node) const { return specs_[node]; }
  const NodeState& state(size_t node) const { return states_[node]; }
  // Dense model id of a node (index into the fleet's model list), -1 if none.
  int model_id(size_t node) const { return model_ids_[node]; }
  int num_models() const { return static_cast<int>(models_.size()); }

  // Bit i set when the pod may use model id i. All bits when the pod names no model;
  // models unknown to this fleet are ignored (so a pod naming only those fits nowhere).
  uint64_t ModelMask(const std::vector<std::string>& allowed_models) const;

  // Whether `pod` fits on `node` right now (mask from ModelMask(pod.allowed_models)).
  bool Fits(size_t node, const PodRequest& pod, uint64_t model_mask) const;

  // The device choice every baseline shares for whole-GPU pods: the lowest-index
  // fully free GPUs. Empty when there are not enough.
  std::vector<int> LowestFreeGpus(size_t node, int count) const;

  // Reserves `alloc` for `pod`. FailedPrecondition (and no change) when it does not
  // fit: wrong GPU count, a GPU without enough milli left, a whole-GPU pod on a
  // partly used GPU, duplicated devices, CPU or memory short, or a model not allowed.
  Status Apply(const PodRequest& pod, const Allocation& alloc);
  // Returns what Apply reserved. FailedPrecondition if it would exceed capacity.
  Status Release(const PodRequest& pod, const Allocation& alloc);

  // Sets what is left on `node` outright, for a fleet that mirrors state kept elsewhere
  // (the placer's, placement/node_packer.h). Bumps the node's version only when something
  // changed, so policies' per-node caches survive a sync that finds nothing new.
  // InvalidArgument for a wrong GPU count or values outside 0..capacity.
  Status SetLeft(size_t node, int64_t cpu_left, int64_t memory_left, std::span<const int> gpu_left);

  int64_t gpu_capacity_milli() const { return gpu_capacity_milli_; }
  int64_t gpu_allocated_milli() const { return gpu_allocated_milli_; }

 private:
  Fleet() = default;
  Status CheckAllocation(const PodRequest& pod, const Allocation& alloc) const;

  std::vector<NodeSpec> specs_;
  std::vector<NodeState> states_;
  std::vector<int> model_ids_;
  std::vector<std::string> models_;
  int64_t gpu_capacity_milli_ = 0;
  int64_t gpu_allocated_milli_ = 0;
};

}  // namespace gpufed::packing
