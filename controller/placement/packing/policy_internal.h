#pragma once
// Shared machinery of the packing policies; not part of the public API.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/placement/packing/fleet.h"
#include "controller/placement/packing/policy.h"

namespace gpufed::packing::internal {

// SplitMix64: tiny, fast and identical on every platform (std:: distributions are not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n > 0.
  uint64_t Below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64); }

 private:
  uint64_t state_;
};

// Share GPU with the least milli left that still fits (lowest index on ties); -1 if none.
int BestFitGpu(const NodeState& s, int gpu_milli);
// Lowest-index GPU with room; -1 if none.
int FirstFitGpu(const NodeState& s, int gpu_milli);

// Builds the allocation for `node`: `share_gpu` for shared pods, the lowest free
// GPUs for whole-GPU pods, none for CPU-only pods.
Allocation MakeAllocation(const Fleet& fleet, size_t node, const PodRequest& pod, int share_gpu);

// What a scoring policy says about one feasible node.
struct NodeScore {
  double score = 0;    // higher is better
  int share_gpu = -1;  // device for shared pods
};

// Scores every feasible node in fleet order and keeps the best; equal scores go
// to the first node in fleet order, or with random_ties to a uniformly random one
// (reservoir sampling, as stock kube-scheduler does).
class ScoringPolicy : public PackingPolicy {
 public:
  ScoringPolicy(std::string name, uint64_t seed, bool random_ties)
      : name_(std::move(name)), rng_(seed), random_ties_(random_ties) {}
  std::string_view name() const override { return name_; }
  std::optional<Allocation> PlaceAmong(const Fleet& fleet, const PodRequest& pod,
                                       const std::vector<bool>* eligible) override;

 protected:
  // Called once per Place before Score.
  virtual void Prepare(const Fleet& /*fleet*/, const PodRequest& /*pod*/) {}
  virtual NodeScore Score(const Fleet& fleet, size_t node, const PodRequest& pod) = 0;
  Rng& rng() { return rng_; }

 private:
  std::string name_;
  Rng rng_;
  bool random_ties_;
};

std::unique_ptr<PackingPolicy> MakeRandomPolicy(uint64_t seed);
std::unique_ptr<PackingPolicy> MakeFirstFitPolicy();
std::unique_ptr<PackingPolicy> MakeBestFitPolicy(uint64_t seed);
std::unique_ptr<PackingPolicy> MakeDotProdPolicy(uint64_t seed);
std::unique_ptr<PackingPolicy> MakeGpuPackingPolicy(uint64_t seed);
std::unique_ptr<PackingPolicy> MakeGpuClusteringPolicy(uint64_t seed);
std::unique_ptr<PackingPolicy> MakeFgdPolicy(uint64_t seed, const WorkloadDistribution& workload);
std::unique_ptr<PackingPolicy> MakeGpufedPolicy(uint64_t seed, const WorkloadDistribution& workload);

}  // namespace gpufed::packing::internal
