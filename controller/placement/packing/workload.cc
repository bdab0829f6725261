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
  using Shape = std::tuple<int64_t, int, int, std::string>;  // cpu, milli, count, models
  std::map<Shape, std::pair<int64_t, std::vector<std::string>>> counts;
  for (const PodRequest& p : pods) {
    const int milli = p.NeedsGpu() ? p.gpu_milli : 0;
    const int num = p.NeedsGpu() ? p.num_gpu : 0;
    auto& slot = counts[Shape{p.cpu_milli, milli, num, ModelsKey(p.allowed_models)}];
    if (slot.first++ == 0) slot.second = p.allowed_models;
  }
  std::vector<std::pair<Shape, int64_t>> ranked;
  for (const auto& [shape, c] : counts) ranked.emplace_back(shape, c.first);
  // Most frequent first; equal counts in a fixed order (larger shapes first, as the
  // reference simulator's reverse sort does) so the cut is deterministic.
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return a.first > b.first;
  });
  const double total = static_cast<double>(pods.size());
  const double wanted = coverage * total;
  double covered = 0;
  std::vector<TypicalPod> out;
  for (const auto& [shape, count] : ranked) {
    if (covered >= wanted && !out.empty()) break;
    covered += static_cast<double>(count);
    TypicalPod t;
    t.cpu_milli = std::get<0>(shape);
    t.gpu_milli = std::get<1>(shape);
    t.num_gpu = std::get<2>(shape);
    t.allowed_models = counts[shape].second;
    t.weight = static_cast<double>(count);
    out.push_back(std::move(t));
  }
  for (TypicalPod& t : out) t.weight /= covered;
  return WorkloadDistribution(std::move(out));
}

FragmentationModel::FragmentationModel(const WorkloadDistribution& dist, const Fleet& fleet) {
  for (const TypicalPod& t : dist.pods()) {
    if (t.gpu_milli <= 0 || t.num_gpu <= 0) {
      cpu_only_weight_ += t.weight;
      continue;
    }
    entries_.push_back(Entry{t.cpu_milli, t.gpu_milli, t.num_gpu, fleet.ModelMask(t.allowed_models), t.weight});
  }
}

double FragmentationModel::NodeFrag(int model_id, int64_t cpu_left, std::span<const int> gpu_left) const {
  int64_t total = 0;
  for (int left : gpu_left) total += left;
  if (total == 0) return 0;
  double frag = cpu_only_weight_ * static_cast<double>(total);
  for (const Entry& e : entries_) {
    if (model_id < 0 || ((e.model_mask >> model_id) & 1) == 0 || cpu_left < e.cpu_milli) {
      frag += e.weight * static_cast<double>(total);
      continue;
    }
    int fitting = 0;
    int64_t too_small = 0;
    for (int left : gpu_left) {
      if (left >= e.gpu_milli) {
        ++fitting;
      } else {
        too_small += left;
      }
    }
    frag += e.weight * static_cast<double>(fitting >= e.num_gpu ? too_small : total);
  }
  return frag;
}

}  // namespace gpufed::packing
