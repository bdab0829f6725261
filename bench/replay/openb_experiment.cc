#include "bench/replay/openb_experiment.h"

#include <cmath>
#include <numeric>

#include "bench/replay/metrics.h"
#include "controller/placement/packing/policy.h"

namespace gpufed::replay {
namespace {

// Same SplitMix64 as the packing library's; separate streams per purpose so that
// adding a step never shifts another step's draws.
class Stream {
 public:
  Stream(uint64_t seed, uint64_t purpose) : state_(seed * 0x9E3779B97F4A7C15ULL ^ purpose) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  uint64_t Below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64); }

 private:
  uint64_t state_;
};

template <typename T>
void Shuffle(std::vector<T>& v, Stream& s) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[s.Below(i)]);
}

}  // namespace

SeedWorkload BuildSeedWorkload(const OpenbTrace& trace, uint64_t seed, double inflation_ratio) {
  SeedWorkload w;
  w.seed = seed;
  w.node_order.resize(trace.nodes.size());
  std::iota(w.node_order.begin(), w.node_order.end(), size_t{0});
  Stream node_stream(seed, 1);
  Shuffle(w.node_order, node_stream);

  int64_t capacity = 0;
  for (const auto& n : trace.nodes) capacity += int64_t{n.num_gpu} * packing::kMilliPerGpu;
  const double target = inflation_ratio * static_cast<double>(capacity);
  int64_t total = 0;
  for (uint32_t i = 0; i < trace.pods.size(); ++i) {
    w.arrivals.push_back({i, -1});
    total += trace.pods[i].TotalGpuMilli();
  }
  Stream inflate(seed, 2);
  if (total > 0 && static_cast<double>(total) < target) {
    for (int32_t copy = 0;; ++copy) {
      const auto idx = static_cast<uint32_t>(inflate.Below(trace.pods.size()));
      const int64_t req = trace.pods[idx].TotalGpuMilli();
      if (static_cast<double>(total + req) > target) break;
      total += req;
      w.arrivals.push_back({idx, copy});
    }
  } else {
    while (static_cast<double>(total) > target && !w.arrivals.empty()) {
      const size_t victim = inflate.Below(w.arrivals.size());
      total -= trace.pods[w.arrivals[victim].pod].TotalGpuMilli();
      w.arrivals.erase(w.arrivals.begin() + static_cast<std::ptrdiff_t>(victim));
    }
  }
  Stream order(seed, 3);
  Shuffle(w.arrivals, order);
  return w;
}

std::string ArrivalName(const OpenbTrace& trace, const Arrival& a) {
  std::string name = trace.pods[a.pod].name;
  if (a.copy >= 0) name.append("-tuned-").append(std::to_string(a.copy));
  return name;
}

Result<RunResult> RunOpenb(const OpenbTrace& trace, const SeedWorkload& workload, std::string_view policy_name,
                           const packing::WorkloadDistribution& distribution, bool record_placements) {
  std::vector<packing::NodeSpec> nodes;
  nodes.reserve(workload.node_order.size());
  for (size_t i : workload.node_order) nodes.push_back(trace.nodes[i]);
  auto fleet = packing::Fleet::Create(std::move(nodes));
  if (!fleet.ok()) return fleet.status();
  auto policy = packing::MakePackingPolicy(policy_name, workload.seed, distribution);
  if (!policy.ok()) return policy.status();
  const int64_t capacity = fleet->gpu_capacity_milli();
  if (capacity <= 0) return InvalidArgument("the node list has no GPUs");

  RunResult result;
  LevelCurve curve;
  LevelCurve frag_curve;
  const packing::FragmentationModel frag_model(distribution, *fleet);
  std::vector<double> node_frag(fleet->size());
  double frag_total = 0;
  for (size_t n = 0; n < fleet->size(); ++n) {
    node_frag[n] = frag_model.NodeFrag(fleet->model_id(n), fleet->state(n).cpu_left, fleet->state(n).gpu_left);
    frag_total += node_frag[n];
  }
  int64_t arrived = 0;
  // Built with append(): GCC 12 at -O3 misreports operator+ chains (-Wrestrict).
  std::string prefix(policy_name);
  prefix.append(",").append(std::to_string(workload.seed)).append(",");
  for (size_t order = 0; order < workload.arrivals.size(); ++order) {
    const Arrival& a = workload.arrivals[order];
    const packing::PodRequest& pod = trace.pods[a.pod];
    arrived += pod.TotalGpuMilli();
    std::optional<packing::Allocation> alloc = (*policy)->Place(*fleet, pod);
    if (alloc) {
      Status s = fleet->Apply(pod, *alloc);
      if (!s.ok()) return Internal("policy " + std::string(policy_name) + " chose an invalid allocation: " + s.message());
      ++result.placed;
      const packing::NodeState& changed = fleet->state(alloc->node);
      const double now = frag_model.NodeFrag(fleet->model_id(alloc->node), changed.cpu_left, changed.gpu_left);
      frag_total += now - node_frag[alloc->node];
      node_frag[alloc->node] = now;
    } else {
      ++result.failed;
    }
    curve.Record(arrived, fleet->gpu_allocated_milli(), capacity);
    frag_curve.Record(arrived, std::llround(frag_total), capacity);
    if (record_placements) {
      std::string& out = result.placements_csv;
      out.append(prefix).append(std::to_string(order)).append(",").append(ArrivalName(trace, a)).append(",");
      if (alloc) {
        out.append(fleet->spec(alloc->node).name).append(",");
        for (size_t g = 0; g < alloc->gpus.size(); ++g) {
          if (g > 0) out.append("|");
          out.append(std::to_string(alloc->gpus[g]));
        }
        out.append(",").append(std::to_string(alloc->gpu_milli_each));
      } else {
        out.append(",,");
      }
      out.append("\n");
    }
  }
  result.levels = curve.Levels();
  result.frag_levels = frag_curve.Levels();
  return result;
}

}  // namespace gpufed::replay
