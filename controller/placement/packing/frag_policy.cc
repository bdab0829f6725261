#include "controller/placement/packing/frag_policy.h"

#include <cmath>

#include "controller/common/hash64.h"

namespace gpufed::packing::internal {

FragPolicy::FragPolicy(std::string name, uint64_t seed, const WorkloadDistribution& workload, bool random_ties,
                       bool resources_measure)
    : name_(std::move(name)),
      rng_(seed),
      random_ties_(random_ties),
      resources_measure_(resources_measure),
      workload_(workload) {}

void FragPolicy::AddMove(int share_gpu, std::pair<double, double> before, std::pair<double, double> after) {
  FragMove m;
  m.share_gpu = share_gpu;
  m.delta = before.first - after.first;
  if (resources_measure_) m.delta_resources = before.second - after.second;
  moves_.push_back(m);
}

void FragPolicy::Reset(const Fleet& fleet) {
  fleet_ = &fleet;
  model_.emplace(workload_, fleet);
  shapes_.clear();
  shape_ids_.clear();
  cache_.clear();
  last_shape_ = -1;
  frag_.assign(fleet.size(), FragEntry{});
}

FragPolicy::ShapeNumbers FragPolicy::NumbersOf(const PodRequest& pod) const {
  return {pod.cpu_milli, resources_measure_ ? pod.memory_mib : 0, pod.NeedsGpu() ? pod.gpu_milli : 0,
          pod.NeedsGpu() ? pod.num_gpu : 0};
}

uint64_t FragPolicy::HashOf(const ShapeNumbers& numbers, const std::vector<std::string>& allowed_models) {
  Hash64 h;
  h.Add(static_cast<uint64_t>(numbers.cpu_milli));
  h.Add(static_cast<uint64_t>(numbers.memory_mib));
  h.Add(static_cast<uint64_t>(numbers.gpu_milli));
  h.Add(static_cast<uint64_t>(numbers.num_gpu));
  for (const std::string& m : allowed_models) h.Add(m);
  return h.value();
}

int FragPolicy::ShapeId(const PodRequest& pod) {
  // Callers ask about one shape many times in a row (the placer, once per cluster it
  // tries): the last answer is checked first, and a few shapes are scanned before a key
  // is hashed.
  constexpr size_t kScanned = 16;
  const ShapeNumbers numbers = NumbersOf(pod);
  auto same = [&](const ShapeKey& k) { return k.numbers == numbers && k.allowed_models == pod.allowed_models; };
  if (last_shape_ >= 0 && same(shapes_[static_cast<size_t>(last_shape_)])) return last_shape_;
  if (shapes_.size() <= kScanned) {
    for (size_t s = 0; s < shapes_.size(); ++s) {
      if (same(shapes_[s])) return last_shape_ = static_cast<int>(s);
    }
  }
  const uint64_t hash = HashOf(numbers, pod.allowed_models);
  for (auto [it, end] = shape_ids_.equal_range(hash); it != end; ++it) {
    if (same(shapes_[static_cast<size_t>(it->second)])) return last_shape_ = it->second;
  }
  const int id = static_cast<int>(shapes_.size());
  shapes_.push_back({numbers, pod.allowed_models});
  shape_ids_.emplace(hash, id);
  cache_.emplace_back(fleet_->size());
  return last_shape_ = id;
}

std::pair<double, double> FragPolicy::CurrentFrag(const Fleet& fleet, size_t node) {
  FragEntry& e = frag_[node];
  const NodeState& s = fleet.state(node);
  if (e.version_plus_one != s.version + 1) {
    e.frag = model_->NodeFrag(fleet.model_id(node), s.cpu_left, s.gpu_left);
    e.frag_resources =
        resources_measure_ ? model_->NodeFragResources(fleet.model_id(node), s.cpu_left, s.memory_left, s.gpu_left) : 0;
    e.version_plus_one = s.version + 1;
  }
  return {e.frag, e.frag_resources};
}

void FragPolicy::Moves(const Fleet& fleet, size_t node, const PodRequest& pod) {
  moves_.clear();
  const NodeState& s = fleet.state(node);
  const std::pair<double, double> before = CurrentFrag(fleet, node);
  const int model = fleet.model_id(node);
  const int64_t cpu_after = s.cpu_left - pod.cpu_milli;
  const int64_t memory_after = s.memory_left - pod.memory_mib;
  if (pod.IsShared()) {
    // GPUs with the same milli left lead to the same node state; evaluate the
    // first of each (lowest index), which is also the reference's tie-break. Each move
    // changes one GPU, so each is measured from one view of the node.
    bool viewed = false;
    for (size_t g = 0; g < s.gpu_left.size(); ++g) {
      const int left = s.gpu_left[g];
      if (left < pod.gpu_milli) continue;
      bool seen = false;
      for (size_t h = 0; h < g && !seen; ++h) seen = s.gpu_left[h] == left;
      if (seen) continue;
      if (!viewed) model_->View(s.gpu_left, view_);
      viewed = true;
      const int taken = left - pod.gpu_milli;
      AddMove(static_cast<int>(g), before,
              {model_->NodeFragAfter(model, cpu_after, view_, left, taken),
               resources_measure_ ? model_->NodeFragResourcesAfter(model, cpu_after, memory_after, view_, left, taken)
                                  : 0});
    }
    return;
  }
  scratch_gpus_ = s.gpu_left;
  if (pod.NeedsGpu()) {
    int wanted = pod.num_gpu;
    for (size_t g = 0; g < scratch_gpus_.size() && wanted > 0; ++g) {
      if (scratch_gpus_[g] == kMilliPerGpu) {
        scratch_gpus_[g] = 0;
        --wanted;
      }
    }
  }
  AddMove(-1, before,
          {model_->NodeFrag(model, cpu_after, scratch_gpus_),
           resources_measure_ ? model_->NodeFragResources(model, cpu_after, memory_after, scratch_gpus_) : 0});
}

std::optional<Allocation> FragPolicy::PlaceAmong(const Fleet& fleet, const PodRequest& pod,
                                                const std::vector<bool>* eligible) {
  if (fleet_ != &fleet || frag_.size() != fleet.size()) Reset(fleet);
  const int shape = ShapeId(pod);
  std::vector<CacheEntry>& cache = cache_[static_cast<size_t>(shape)];
  const uint64_t mask = fleet.ModelMask(pod.allowed_models);
  bool found = false;
  size_t best_node = 0;
  FragVerdict best;
  uint64_t ties = 0;
  for (size_t n = 0; n < fleet.size(); ++n) {
    if ((eligible != nullptr && !(*eligible)[n]) || !fleet.Fits(n, pod, mask)) continue;
    CacheEntry& c = cache[n];
    const uint64_t version = fleet.state(n).version;
    if (c.version_plus_one != version + 1) {
      Moves(fleet, n, pod);
      c.verdict = Judge(fleet, n, pod, moves_);
      c.version_plus_one = version + 1;
    }
    const FragVerdict& v = c.verdict;
    if (!found || v.score > best.score || (!random_ties_ && v.score == best.score && v.tiebreak > best.tiebreak)) {
      found = true;
      best = v;
      best_node = n;
      ties = 1;
    } else if (random_ties_ && v.score == best.score && rng_.Below(++ties) == 0) {
      best = v;
      best_node = n;
    }
  }
  if (!found) return std::nullopt;
  Allocation a = MakeAllocation(fleet, best_node, pod, best.share_gpu);
  a.score = best.score;
  return a;
}

namespace {

// FGD as in the authors' simulator: score = int(100 * sigmoid(delta / 1000)),
// best GPU of a node by that score (first on ties), first node in fleet order
// among equal nodes (see baselines.cc for why).
class FgdPolicy : public FragPolicy {
 public:
  FgdPolicy(uint64_t seed, const WorkloadDistribution& workload) : FragPolicy("fgd", seed, workload, false) {}

 protected:
  FragVerdict Judge(const Fleet&, size_t, const PodRequest&, const std::vector<FragMove>& moves) override {
    FragVerdict v;
    bool first = true;
    for (const FragMove& m : moves) {
      const double score = static_cast<double>(static_cast<int64_t>(100.0 / (1.0 + std::exp(-m.delta / 1000.0))));
      if (first || score > v.score) {
        v.score = score;
        v.share_gpu = m.share_gpu;
        first = false;
      }
    }
    return v;
  }
};

}  // namespace

std::unique_ptr<PackingPolicy> MakeFgdPolicy(uint64_t seed, const WorkloadDistribution& workload) {
  return std::make_unique<FgdPolicy>(seed, workload);
}

}  // namespace gpufed::packing::internal
