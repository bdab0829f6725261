#include "controller/placement/node_packer.h"

#include <algorithm>

#include "controller/common/hash64.h"
#include "controller/common/quantity.h"
#include "controller/placement/inventory.h"

namespace gpufed::placement {
namespace {

// CPU and memory of pools that do not declare them: more than any pod asks, small enough
// that the fragmentation measure's copy counts (left / asked x milli) stay in range.
constexpr int64_t kUndeclared = int64_t{1} << 40;

// A GPU with fractional work on it is not whole even with its compute all free (a MIG
// layout or memory shares may hold it): the fleet sees it one milli short of whole.
int MilliLeft(const GpuState& gpu) {
  const int left = std::clamp(gpu.free_milli, 0, kMilliPerGpu);
  return gpu.shared && left == kMilliPerGpu ? kMilliPerGpu - 1 : left;
}

std::string ModelOf(const model::NodePool& pool) {
  if (pool.gpu.count == 0) return "";
  return pool.gpu.model.empty() ? "gpu" : pool.gpu.model;
}

packing::WorkloadDistribution MixOn(const model::Cluster& cluster, const PodMix* mix) {
  std::vector<packing::PodRequest> pods;
  std::vector<int64_t> counts;
  for (const PodMix::Shape& shape : mix != nullptr ? mix->shapes() : std::vector<PodMix::Shape>{}) {
    const model::ResourceRequest& r = shape.request;
    for (const model::NodePool& pool : cluster.node_pools) {
      if (!PoolShapeFits(pool, r)) continue;
      packing::PodRequest pod = PodFor(r, DemandOn(pool, r));
      pod.num_gpu = std::min(pod.num_gpu, pool.gpu.count);  // a spread request: per node at most a node
      if (pod.num_gpu == 0) pod.gpu_milli = 0;
      pods.push_back(std::move(pod));
      counts.push_back(shape.count);
      break;
    }
  }
  return packing::WorkloadDistribution::FromPodCounts(pods, counts);
}

}  // namespace

std::string PodMix::KeyOf(const model::ResourceRequest& r) {
  std::string key = std::to_string(r.gpus) + "/" + std::to_string(r.gpu_memory.milli()) + "/" +
                    std::to_string(r.gpu_share.milli()) + "/" + r.mig_profile + "/" +
                    std::to_string(static_cast<int>(r.topology)) + "/" + std::to_string(r.nodes) + "/" +
                    std::to_string(r.gpus_per_node) + "/" + std::to_string(r.cpu.milli()) + "/" +
                    std::to_string(r.memory.milli());
  for (const std::string& m : r.gpu_models) key += "/" + m;
  return key;
}

void PodMix::Add(const model::ResourceRequest& r, int64_t count) {
  auto [it, added] = index_.try_emplace(KeyOf(r), shapes_.size());
  if (added) {
    shapes_.push_back({r, 0});
    keys_.push_back(&it->first);
  }
  shapes_[it->second].count += count;
}

uint64_t PodMix::Fingerprint() const {
  Hash64 h;
  for (size_t s = 0; s < shapes_.size(); ++s) {
    h.Add(*keys_[s]);
    h.Add(static_cast<uint64_t>(shapes_[s].count));
  }
  return h.value();
}

packing::PodRequest PodFor(const model::ResourceRequest& request, const GpuDemand& demand) {
  packing::PodRequest pod;
  pod.cpu_milli = request.cpu.milli();
  pod.memory_mib = request.memory.milli() / 1000 / kMiB;
  if (demand.gpus > 0) {
    pod.num_gpu = demand.fractional ? 1 : demand.gpus;
    pod.gpu_milli = demand.fractional ? std::clamp(demand.milli_each, 1, kMilliPerGpu) : kMilliPerGpu;
  }
  pod.allowed_models = request.gpu_models;
  return pod;
}

Result<std::shared_ptr<NodePacker>> NodePacker::Create(const model::Cluster& /*cluster*/, std::string_view policy,
                                                       std::shared_ptr<const PodMix> mix) {
  // Checks the name now, so a bad one is an error at plan start and not a silent fallback.
  Result<std::unique_ptr<packing::PackingPolicy>> probe = packing::MakePackingPolicy(policy, 0, {});
  if (!probe.ok()) return probe.status();
  return std::shared_ptr<NodePacker>(new NodePacker(std::string(policy), std::move(mix)));
}

Status NodePacker::Sync(const ClusterState& state) {
  const model::Cluster& cluster = *state.cluster;
  if (!workload_) workload_ = MixOn(cluster, mix_.get());
  const bool home = &state == home_;
  if (home && synced_home_ && synced_generation_ == state.generation) return Status::Ok();
  synced_home_ = false;
  bool same_nodes = fleet_.has_value() && fleet_nodes_.size() == state.nodes.size();
  // Nodes are only ever appended to a state, so the home state with as many nodes as the
  // fleet has the same ones once compared; a trial copy is compared name by name.
  for (size_t n = 0; same_nodes && !(home && home_nodes_checked_) && n < state.nodes.size(); ++n) {
    same_nodes = fleet_nodes_[n] == state.nodes[n].name;
  }
  if (!same_nodes) {
    std::vector<packing::NodeSpec> specs;
    fleet_nodes_.clear();
    for (const NodeState& node : state.nodes) {
      const model::NodePool& pool = cluster.node_pools[static_cast<size_t>(node.pool)];
      packing::NodeSpec spec;
      spec.name = node.name;
      spec.cpu_milli = node.cpu_limited ? std::max<int64_t>(pool.cpu.milli(), node.free_cpu_milli) : kUndeclared;
      spec.memory_mib = node.cpu_limited ? std::max<int64_t>(pool.memory.milli() / 1000, node.free_memory) / kMiB
                                         : kUndeclared;
      spec.num_gpu = static_cast<int>(node.gpus.size());
      spec.model = ModelOf(pool);
      specs.push_back(std::move(spec));
      fleet_nodes_.push_back(node.name);
    }
    Result<packing::Fleet> fleet = packing::Fleet::Create(std::move(specs));
    if (!fleet.ok()) return fleet.status();
    Result<std::unique_ptr<packing::PackingPolicy>> policy = packing::MakePackingPolicy(policy_name_, 0, *workload_);
    if (!policy.ok()) return policy.status();
    fleet_.emplace(std::move(*fleet));
    policy_ = std::move(*policy);
  }
  for (size_t n = 0; n < state.nodes.size(); ++n) {
    const NodeState& node = state.nodes[n];
    const packing::NodeSpec& spec = fleet_->spec(n);
    gpu_left_.clear();
    for (const GpuState& gpu : node.gpus) gpu_left_.push_back(MilliLeft(gpu));
    const int64_t cpu = node.cpu_limited ? std::clamp<int64_t>(node.free_cpu_milli, 0, spec.cpu_milli) : kUndeclared;
    const int64_t memory =
        node.cpu_limited ? std::clamp<int64_t>(node.free_memory / kMiB, 0, spec.memory_mib) : kUndeclared;
    GPUFED_RETURN_IF_ERROR(fleet_->SetLeft(n, cpu, memory, gpu_left_));
  }
  synced_home_ = home;
  home_nodes_checked_ = home_nodes_checked_ || home;
  synced_generation_ = state.generation;
  return Status::Ok();
}

std::optional<PackingChoice> NodePacker::Choose(const ClusterState& state, const model::ResourceRequest& request,
                                                std::span<const PackingCandidate> candidates) {
  if (candidates.empty()) return std::nullopt;
  // The fleet's checks are a subset of the placer's, so the policy always finds one of
  // the candidates; should the mirror ever fail, the first candidate keeps the plan going.
  const PackingChoice first{0, -1};
  if (!Sync(state).ok()) return first;
  // A request's pod can differ between pools: a memory share is a larger fraction of a
  // smaller GPU, and an unshared pool gives a fraction a whole GPU. The policy is asked
  // once per distinct pod. The pool that wastes least of what it gives wins (a whole GPU
  // for a 250m request strands 750m that no fragmentation measure counts, since the pod
  // takes the GPU whole), then the policy's score, then the earlier node.
  // Pods by pool demand (candidates of one pool share a demand object), then merged into
  // groups of equal pods: usually one PodFor per call.
  // (Scratch kept by the packer: the placer asks this thousands of times a pass.)
  std::vector<const GpuDemand*>& demands = scratch_demands_;
  std::vector<size_t>& group_of_demand = scratch_group_of_demand_;
  std::vector<ChoiceGroup>& groups = scratch_groups_;
  std::vector<size_t>& group_of = scratch_group_of_;
  demands.clear();
  group_of_demand.clear();
  groups.clear();
  group_of.assign(candidates.size(), 0);
  for (size_t c = 0; c < candidates.size(); ++c) {
    size_t d = 0;
    while (d < demands.size() && demands[d] != candidates[c].demand) ++d;
    if (d == demands.size()) {
      packing::PodRequest pod = PodFor(request, *candidates[c].demand);
      const int waste = candidates[c].demand->gpus > 0 ? WasteOf(*candidates[c].demand) : 0;
      size_t g = 0;
      while (g < groups.size() && !(groups[g].pod.num_gpu == pod.num_gpu && groups[g].pod.gpu_milli == pod.gpu_milli &&
                                     groups[g].waste == waste)) {
        ++g;
      }
      if (g == groups.size()) groups.push_back({std::move(pod), waste});
      demands.push_back(candidates[c].demand);
      group_of_demand.push_back(g);
    }
    group_of[c] = group_of_demand[d];
  }
  std::optional<PackingChoice> best;
  int best_waste = 0;
  double best_score = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    const ChoiceGroup& group = groups[g];
    if (best && group.waste > best_waste) continue;
    eligible_.assign(fleet_->size(), false);
    for (size_t c = 0; c < candidates.size(); ++c) {
      if (group_of[c] == g) eligible_[static_cast<size_t>(candidates[c].node)] = true;
    }
    std::optional<packing::Allocation> alloc = policy_->PlaceAmong(*fleet_, group.pod, &eligible_);
    if (!alloc || (best && group.waste == best_waste && alloc->score <= best_score)) continue;
    for (size_t c = 0; c < candidates.size(); ++c) {
      if (static_cast<size_t>(candidates[c].node) != alloc->node) continue;
      best = PackingChoice{c, group.pod.IsShared() && !alloc->gpus.empty() ? alloc->gpus.front() : -1};
      best_waste = group.waste;
      best_score = alloc->score;
      break;
    }
  }
  return best ? best : first;
}

}  // namespace gpufed::placement
