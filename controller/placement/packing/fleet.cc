#include "controller/placement/packing/fleet.h"

#include <algorithm>
#include <utility>

namespace gpufed::packing {

Status ValidatePodRequest(const PodRequest& pod) {
  if (pod.cpu_milli < 0 || pod.memory_mib < 0 || pod.num_gpu < 0 || pod.gpu_milli < 0) {
    return InvalidArgument("pod " + pod.name + ": negative request");
  }
  if (pod.gpu_milli > kMilliPerGpu) {
    return InvalidArgument("pod " + pod.name + ": gpu_milli above 1000");
  }
  if (pod.num_gpu > 1 && pod.gpu_milli > 0 && pod.gpu_milli < kMilliPerGpu) {
    return InvalidArgument("pod " + pod.name + ": a GPU share must use exactly one GPU");
  }
  return Status::Ok();
}

int AffinityTag(const PodRequest& pod) {
  if (!pod.NeedsGpu()) return -1;
  return pod.IsShared() ? 0 : pod.num_gpu;
}

int64_t NodeState::GpuLeftTotal() const {
  int64_t total = 0;
  for (int left : gpu_left) total += left;
  return total;
}

int NodeState::FullyFreeGpus() const {
  int free = 0;
  for (int left : gpu_left) free += left == kMilliPerGpu ? 1 : 0;
  return free;
}

Result<Fleet> Fleet::Create(std::vector<NodeSpec> nodes) {
  Fleet fleet;
  for (const NodeSpec& spec : nodes) {
    if (spec.cpu_milli < 0 || spec.memory_mib < 0 || spec.num_gpu < 0) {
      return InvalidArgument("node " + spec.name + ": negative capacity");
    }
    if (spec.num_gpu > 0 && spec.model.empty()) {
      return InvalidArgument("node " + spec.name + ": GPUs without a model");
    }
    int id = -1;
    if (!spec.model.empty()) {
      auto it = std::find(fleet.models_.begin(), fleet.models_.end(), spec.model);
      if (it == fleet.models_.end()) {
        if (fleet.models_.size() >= static_cast<size_t>(kMaxModels)) {
          return InvalidArgument("more than 64 distinct GPU models");
        }
        fleet.models_.push_back(spec.model);
        it = fleet.models_.end() - 1;
      }
      id = static_cast<int>(it - fleet.models_.begin());
    }
    NodeState state;
    state.cpu_left = spec.cpu_milli;
    state.memory_left = spec.memory_mib;
    state.gpu_left.assign(static_cast<size_t>(spec.num_gpu), kMilliPerGpu);
    fleet.model_ids_.push_back(id);
    fleet.states_.push_back(std::move(state));
    fleet.gpu_capacity_milli_ += int64_t{spec.num_gpu} * kMilliPerGpu;
  }
  fleet.specs_ = std::move(nodes);
  return fleet;
}

uint64_t Fleet::ModelMask(const std::vector<std::string>& allowed_models) const {
  bool any_named = false;
  uint64_t mask = 0;
  for (const std::string& m : allowed_models) {
    if (m.empty()) continue;
    any_named = true;
    for (size_t i = 0; i < models_.size(); ++i) {
      if (models_[i] == m) mask |= uint64_t{1} << i;
    }
  }
  return any_named ? mask : ~uint64_t{0};
}

bool Fleet::Fits(size_t node, const PodRequest& pod, uint64_t model_mask) const {
  const NodeState& s = states_[node];
  if (s.cpu_left < pod.cpu_milli || s.memory_left < pod.memory_mib) return false;
  if (!pod.NeedsGpu()) return true;
  const int id = model_ids_[node];
  if (id < 0 || ((model_mask >> id) & 1) == 0) return false;
  if (pod.IsShared()) {
    for (int left : s.gpu_left) {
      if (left >= pod.gpu_milli) return true;
    }
    return false;
  }
  return s.FullyFreeGpus() >= pod.num_gpu;
}

std::vector<int> Fleet::LowestFreeGpus(size_t node, int count) const {
  std::vector<int> out;
  const NodeState& s = states_[node];
  for (size_t g = 0; g < s.gpu_left.size() && static_cast<int>(out.size()) < count; ++g) {
    if (s.gpu_left[g] == kMilliPerGpu) out.push_back(static_cast<int>(g));
  }
  if (static_cast<int>(out.size()) < count) out.clear();
  return out;
}

Status Fleet::CheckAllocation(const PodRequest& pod, const Allocation& alloc) const {
  GPUFED_RETURN_IF_ERROR(ValidatePodRequest(pod));
  if (alloc.node >= specs_.size()) return FailedPrecondition("allocation: node index out of range");
  const NodeState& s = states_[alloc.node];
  const int want = pod.NeedsGpu() ? pod.num_gpu : 0;
  if (static_cast<int>(alloc.gpus.size()) != want) {
    return FailedPrecondition("allocation: pod " + pod.name + " needs " + std::to_string(want) + " GPUs");
  }
  if (want > 0 && alloc.gpu_milli_each != pod.gpu_milli) {
    return FailedPrecondition("allocation: gpu_milli_each differs from the request");
  }
  for (size_t i = 0; i < alloc.gpus.size(); ++i) {
    const int g = alloc.gpus[i];
    if (g < 0 || g >= static_cast<int>(s.gpu_left.size())) {
      return FailedPrecondition("allocation: GPU index out of range");
    }
    if (std::count(alloc.gpus.begin(), alloc.gpus.end(), g) != 1) {
      return FailedPrecondition("allocation: GPU listed twice");
    }
  }
  return Status::Ok();
}

Status Fleet::SetLeft(size_t node, int64_t cpu_left, int64_t memory_left, std::span<const int> gpu_left) {
  if (node >= states_.size()) return InvalidArgument("set left: no node " + std::to_string(node));
  const NodeSpec& spec = specs_[node];
  if (gpu_left.size() != static_cast<size_t>(spec.num_gpu)) {
    return InvalidArgument("set left: node " + spec.name + " has " + std::to_string(spec.num_gpu) + " GPUs, not " +
                           std::to_string(gpu_left.size()));
  }
  NodeState& s = states_[node];
  // Mirrors sync every node of a cluster after each change to one of them: what is
  // already set (and so was checked) is left as it is, before anything is checked.
  if (s.cpu_left == cpu_left && s.memory_left == memory_left &&
      std::equal(s.gpu_left.begin(), s.gpu_left.end(), gpu_left.begin())) {
    return Status::Ok();
  }
  if (cpu_left < 0 || cpu_left > spec.cpu_milli || memory_left < 0 || memory_left > spec.memory_mib) {
    return InvalidArgument("set left: CPU or memory of node " + spec.name + " outside its capacity");
  }
  for (int g : gpu_left) {
    if (g < 0 || g > kMilliPerGpu) return InvalidArgument("set left: GPU milli outside 0..1000 on node " + spec.name);
  }
  gpu_allocated_milli_ += s.GpuLeftTotal();
  s.cpu_left = cpu_left;
  s.memory_left = memory_left;
  s.gpu_left.assign(gpu_left.begin(), gpu_left.end());
  gpu_allocated_milli_ -= s.GpuLeftTotal();
  ++s.version;
  return Status::Ok();
}

Status Fleet::Apply(const PodRequest& pod, const Allocation& alloc) {
  GPUFED_RETURN_IF_ERROR(CheckAllocation(pod, alloc));
  NodeState& s = states_[alloc.node];
  if (s.cpu_left < pod.cpu_milli || s.memory_left < pod.memory_mib) {
    return FailedPrecondition("allocation: CPU or memory short on node " + specs_[alloc.node].name);
  }
  if (pod.NeedsGpu()) {
    const int id = model_ids_[alloc.node];
    const uint64_t mask = ModelMask(pod.allowed_models);
    if (id < 0 || ((mask >> id) & 1) == 0) return FailedPrecondition("allocation: GPU model not allowed");
    for (int g : alloc.gpus) {
      const int left = s.gpu_left[static_cast<size_t>(g)];
      // A whole-GPU pod needs a fully free device; a share needs enough milli left.
      if (left < pod.gpu_milli || (!pod.IsShared() && left != kMilliPerGpu)) {
        return FailedPrecondition("allocation: GPU " + std::to_string(g) + " has not enough left");
      }
    }
  }
  s.cpu_left -= pod.cpu_milli;
  s.memory_left -= pod.memory_mib;
  for (int g : alloc.gpus) s.gpu_left[static_cast<size_t>(g)] -= pod.gpu_milli;
  gpu_allocated_milli_ += pod.TotalGpuMilli();
  if (int tag = AffinityTag(pod); tag >= 0) ++s.affinity[tag];
  ++s.version;
  return Status::Ok();
}

Status Fleet::Release(const PodRequest& pod, const Allocation& alloc) {
  GPUFED_RETURN_IF_ERROR(CheckAllocation(pod, alloc));
  NodeState& s = states_[alloc.node];
  const NodeSpec& spec = specs_[alloc.node];
  if (s.cpu_left + pod.cpu_milli > spec.cpu_milli || s.memory_left + pod.memory_mib > spec.memory_mib) {
    return FailedPrecondition("release: CPU or memory above capacity");
  }
  for (int g : alloc.gpus) {
    if (s.gpu_left[static_cast<size_t>(g)] + pod.gpu_milli > kMilliPerGpu) {
      return FailedPrecondition("release: GPU above capacity");
    }
  }
  const int tag = AffinityTag(pod);
  if (tag >= 0) {
    auto it = s.affinity.find(tag);
    if (it == s.affinity.end()) return FailedPrecondition("release: no such pod on the node");
    if (--it->second == 0) s.affinity.erase(it);
  }
  s.cpu_left += pod.cpu_milli;
  s.memory_left += pod.memory_mib;
  for (int g : alloc.gpus) s.gpu_left[static_cast<size_t>(g)] += pod.gpu_milli;
  gpu_allocated_milli_ -= pod.TotalGpuMilli();
  ++s.version;
  return Status::Ok();
}

}  // namespace gpufed::packing
