#include "controller/placement/packing/workload.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace gpufed::packing {
namespace {

std::string ModelsKey(const std::vector<std::string>& models) {
  std::vector<std::string> sorted;
  for (const std::string& m : models) {
    if (!m.empty()) sorted.push_back(m);
  }
  std::sort(sorted.begin(), sorted.end());
  std::string key;
  for (const std::string& m : sorted) key += m + "|";
  return key;
}

}  // namespace

WorkloadDistribution WorkloadDistribution::FromPods(std::span<const PodRequest> pods, double coverage) {
  const std::vector<int64_t> ones(pods.size(), 1);
  return FromPodCounts(pods, ones, coverage);
}

WorkloadDistribution WorkloadDistribution::FromPodCounts(std::span<const PodRequest> pods,
                                                         std::span<const int64_t> pod_counts, double coverage) {
  using Shape = std::tuple<int64_t, int, int, std::string>;  // cpu, milli, count, models
  std::map<Shape, std::pair<int64_t, std::vector<std::string>>> counts;
  std::map<Shape, int64_t> memory_sums;  // for the shape's mean memory
  int64_t total_pods = 0;
  for (size_t i = 0; i < pods.size() && i < pod_counts.size(); ++i) {
    const PodRequest& p = pods[i];
    const int64_t n = pod_counts[i];
    if (n <= 0) continue;
    total_pods += n;
    const int milli = p.NeedsGpu() ? p.gpu_milli : 0;
    const int num = p.NeedsGpu() ? p.num_gpu : 0;
    const Shape shape{p.cpu_milli, milli, num, ModelsKey(p.allowed_models)};
    auto& slot = counts[shape];
    if (slot.first == 0) slot.second = p.allowed_models;
    slot.first += n;
    memory_sums[shape] += p.memory_mib * n;
  }
  std::vector<std::pair<Shape, int64_t>> ranked;
  for (const auto& [shape, c] : counts) ranked.emplace_back(shape, c.first);
  // Most frequent first; equal counts in a fixed order (larger shapes first, as the
  // reference simulator's reverse sort does) so the cut is deterministic.
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return a.first > b.first;
  });
  auto typical = [&](const Shape& shape, int64_t count) {
    TypicalPod t;
    t.cpu_milli = std::get<0>(shape);
    t.gpu_milli = std::get<1>(shape);
    t.num_gpu = std::get<2>(shape);
    t.allowed_models = counts[shape].second;
    t.weight = static_cast<double>(count);
    t.memory_mib = memory_sums[shape] / count;
    return t;
  };
  auto normalised = [](std::vector<TypicalPod> v, double total) {
    for (TypicalPod& t : v) t.weight /= total;
    return v;
  };
  const double wanted = coverage * static_cast<double>(total_pods);
  double covered = 0;
  size_t cut = 0;  // ranked[0, cut) are FGD's typical pods
  std::vector<TypicalPod> out;
  for (; cut < ranked.size(); ++cut) {
    if (covered >= wanted && !out.empty()) break;
    covered += static_cast<double>(ranked[cut].second);
    out.push_back(typical(ranked[cut].first, ranked[cut].second));
  }

  // The GPU-demand cover: FGD's set, then the other shapes by GPU demand.
  auto demand = [](const std::pair<Shape, int64_t>& r) {
    return static_cast<double>(r.second) * std::get<1>(r.first) * std::get<2>(r.first);
  };
  double total_demand = 0;
  double kept_demand = 0;
  for (size_t i = 0; i < ranked.size(); ++i) {
    total_demand += demand(ranked[i]);
    if (i < cut) kept_demand += demand(ranked[i]);
  }
  std::vector<std::pair<Shape, int64_t>> rest(ranked.begin() + static_cast<std::ptrdiff_t>(cut), ranked.end());
  std::stable_sort(rest.begin(), rest.end(), [&](const auto& a, const auto& b) { return demand(a) > demand(b); });
  std::vector<TypicalPod> wide = out;
  double wide_count = covered;
  for (const auto& r : rest) {
    if (kept_demand >= coverage * total_demand) break;
    kept_demand += demand(r);
    wide_count += static_cast<double>(r.second);
    wide.push_back(typical(r.first, r.second));
  }
  return WorkloadDistribution(normalised(std::move(out), covered), normalised(std::move(wide), wide_count));
}

FragmentationModel::FragmentationModel(const WorkloadDistribution& dist, const Fleet& fleet) {
  for (const TypicalPod& t : dist.pods()) {
    if (t.gpu_milli <= 0 || t.num_gpu <= 0) {
      cpu_only_weight_ += t.weight;
      continue;
    }
    entries_.push_back(
        Entry{t.cpu_milli, t.gpu_milli, t.num_gpu, fleet.ModelMask(t.allowed_models), t.weight, t.memory_mib});
  }
}

FragmentationModel::GpuCounts FragmentationModel::CountFor(int gpu_milli, std::span<const int> gpu_left) {
  GpuCounts c;
  for (int left : gpu_left) {
    if (left >= gpu_milli) {
      ++c.fitting;
    } else {
      c.too_small += left;
    }
  }
  return c;
}

FragmentationModel::GpuCounts FragmentationModel::CountAfter(GpuCounts c, int gpu_milli, int from, int to) {
  if (from >= gpu_milli) {
    --c.fitting;
  } else {
    c.too_small -= from;
  }
  if (to >= gpu_milli) {
    ++c.fitting;
  } else {
    c.too_small += to;
  }
  return c;
}

template <typename Counts>
double FragmentationModel::FragOf(int model_id, int64_t cpu_left, int64_t total, Counts counts) const {
  if (total == 0) return 0;
  double frag = cpu_only_weight_ * static_cast<double>(total);
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    if (model_id < 0 || ((e.model_mask >> model_id) & 1) == 0 || cpu_left < e.cpu_milli) {
      frag += e.weight * static_cast<double>(total);
      continue;
    }
    const GpuCounts c = counts(i);
    frag += e.weight * static_cast<double>(c.fitting >= e.num_gpu ? c.too_small : total);
  }
  return frag;
}

template <typename Counts>
double FragmentationModel::FragResourcesOf(int model_id, int64_t cpu_left, int64_t memory_left, int64_t total,
                                           Counts counts) const {
  if (total == 0) return 0;
  double frag = cpu_only_weight_ * static_cast<double>(total);
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    if (model_id < 0 || ((e.model_mask >> model_id) & 1) == 0) {
      frag += e.weight * static_cast<double>(total);
      continue;
    }
    // GPU side, as FGD: the milli on GPUs with room for the pod, if enough of them.
    const GpuCounts c = counts(i);
    int64_t usable = c.fitting >= e.num_gpu ? total - c.too_small : 0;
    // CPU and memory sides: the GPU milli that whole copies of the pod could back.
    const int64_t per_copy = int64_t{e.gpu_milli} * e.num_gpu;
    // Whole copies: a pod cannot run on a fraction of the CPU it asks for (measured:
    // proportional, fractional copies do worse, bench/README.md).
    if (e.cpu_milli > 0) usable = std::min(usable, std::max<int64_t>(cpu_left, 0) / e.cpu_milli * per_copy);
    if (e.memory_mib > 0) usable = std::min(usable, std::max<int64_t>(memory_left, 0) / e.memory_mib * per_copy);
    frag += e.weight * static_cast<double>(total - std::max<int64_t>(usable, 0));
  }
  return frag;
}

namespace {

int64_t TotalLeft(std::span<const int> gpu_left) {
  int64_t total = 0;
  for (int left : gpu_left) total += left;
  return total;
}

}  // namespace

double FragmentationModel::NodeFrag(int model_id, int64_t cpu_left, std::span<const int> gpu_left) const {
  return FragOf(model_id, cpu_left, TotalLeft(gpu_left),
                [&](size_t i) { return CountFor(entries_[i].gpu_milli, gpu_left); });
}

double FragmentationModel::NodeFragResources(int model_id, int64_t cpu_left, int64_t memory_left,
                                             std::span<const int> gpu_left) const {
  return FragResourcesOf(model_id, cpu_left, memory_left, TotalLeft(gpu_left),
                         [&](size_t i) { return CountFor(entries_[i].gpu_milli, gpu_left); });
}

void FragmentationModel::View(std::span<const int> gpu_left, NodeView& view) const {
  view.total = TotalLeft(gpu_left);
  view.fitting.resize(entries_.size());
  view.too_small.resize(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    const GpuCounts c = CountFor(entries_[i].gpu_milli, gpu_left);
    view.fitting[i] = c.fitting;
    view.too_small[i] = c.too_small;
  }
}

double FragmentationModel::NodeFragAfter(int model_id, int64_t cpu_left, const NodeView& base, int from,
                                         int to) const {
  return FragOf(model_id, cpu_left, base.total - from + to, [&](size_t i) {
    return CountAfter({base.fitting[i], base.too_small[i]}, entries_[i].gpu_milli, from, to);
  });
}

double FragmentationModel::NodeFragResourcesAfter(int model_id, int64_t cpu_left, int64_t memory_left,
                                                  const NodeView& base, int from, int to) const {
  return FragResourcesOf(model_id, cpu_left, memory_left, base.total - from + to, [&](size_t i) {
    return CountAfter({base.fitting[i], base.too_small[i]}, entries_[i].gpu_milli, from, to);
  });
}

}  // namespace gpufed::packing
