#include "controller/placement/inventory.h"

#include <algorithm>
#include <array>
#include <span>

#include "controller/common/quantity.h"
#include "controller/common/vocabulary.h"
#include "controller/placement/node_packer.h"

namespace gpufed::placement {
namespace {

bool ModelAllowed(const model::NodePool& pool, const model::ResourceRequest& r) {
  return r.gpu_models.empty() ||
         std::find(r.gpu_models.begin(), r.gpu_models.end(), pool.gpu.model) != r.gpu_models.end();
}

int GpusPerNode(const model::ResourceRequest& r) { return r.nodes > 1 ? r.gpus_per_node : r.gpus; }

// A single GPU asked by memory below the GPU's size, by share or by MIG profile.
bool WantsFraction(const model::NodePool& pool, const model::ResourceRequest& r) {
  if (r.is_fractional()) return true;
  return r.gpus == 1 && r.nodes == 1 && r.gpu_memory.milli() > 0 && r.gpu_memory < pool.gpu.memory &&
         pool.gpu.sharing != model::GpuSharing::kNone;
}

std::optional<std::string> SmallestMigProfile(const model::NodePool& pool, int64_t memory, int milli) {
  std::optional<std::string> best;
  model::MigProfileName best_info;
  for (const std::string& p : pool.gpu.mig_profiles) {
    std::optional<model::MigProfileName> info = model::ParseMigProfile(p);
    if (!info) continue;
    bool fits =
        (int64_t{info->memory_gb} << 30) >= memory && info->compute_slices * kMilliPerGpu >= milli * kMigComputeSlices;
    if (fits && (!best || info->compute_slices < best_info.compute_slices ||
                 (info->compute_slices == best_info.compute_slices && info->memory_gb < best_info.memory_gb))) {
      best = p;
      best_info = *info;
    }
  }
  return best;
}

}  // namespace

bool Spreads(const model::ResourceRequest& r) {
  return r.topology == model::Topology::kAny && r.nodes <= 1 && r.gpus > 1 && !r.is_fractional();
}

int NodeState::FreeWholeGpus() const {
  int n = 0;
  for (const GpuState& g : gpus) n += (g.free_milli == kMilliPerGpu && !g.shared) ? 1 : 0;
  return n;
}

namespace {

// Whether `pool`'s shape can ever serve `r`; when not, and `why` is given, the reason (the
// placer asks the question for every pool of every cluster it searches: no strings then).
bool ShapeServes(const model::NodePool& pool, const model::ResourceRequest& r, std::string* why) {
  auto no = [why](auto&& reason) {
    if (why != nullptr) *why = reason();
    return false;
  };
  if (GpusPerNode(r) == 0) {
    if (r.cpu > pool.cpu && pool.cpu.milli() > 0) {
      return no([&] { return "needs " + r.cpu.ToString() + " CPU per node"; });
    }
    return true;
  }
  if (!ModelAllowed(pool, r)) return no([&] { return "GPU model " + pool.gpu.model + " not in the allowed models"; });
  if (r.gpu_memory > pool.gpu.memory) {
    return no([&] {
      return "needs " + r.gpu_memory.ToString() + " per GPU, " + pool.gpu.model + " has " + pool.gpu.memory.ToString();
    });
  }
  if (GpusPerNode(r) > pool.gpu.count && !Spreads(r)) {
    return no([&] {
      return "needs " + std::to_string(GpusPerNode(r)) + " GPUs on one node, nodes have " +
             std::to_string(pool.gpu.count);
    });
  }
  if (r.topology == model::Topology::kSameNode && GpusPerNode(r) > 1 && !pool.gpu.nvlink) {
    return no([&] { return "same-node topology needs NVLink, pool " + pool.name + " has none"; });
  }
  if (!r.mig_profile.empty()) {
    if (pool.gpu.sharing != model::GpuSharing::kMig ||
        std::find(pool.gpu.mig_profiles.begin(), pool.gpu.mig_profiles.end(), r.mig_profile) ==
            pool.gpu.mig_profiles.end()) {
      return no([&] { return "MIG profile " + r.mig_profile + " not offered by pool " + pool.name; });
    }
  }
  if (WantsFraction(pool, r) && pool.gpu.sharing == model::GpuSharing::kMig) {
    GpuDemand d = DemandOn(pool, r);
    if (d.mig_profile.empty()) {
      return no([&] { return "no MIG profile of pool " + pool.name + " fits the request"; });
    }
    if (MigProfilesFor(pool.gpu.model) != nullptr && d.mig_geometry == nullptr) {
      return no([&] { return "MIG profile " + d.mig_profile + " does not exist on " + pool.gpu.model; });
    }
  }
  if (pool.cpu.milli() > 0 && r.cpu > pool.cpu) {
    return no([&] { return "needs " + r.cpu.ToString() + " CPU, nodes have " + pool.cpu.ToString(); });
  }
  if (pool.memory.milli() > 0 && r.memory > pool.memory) {
    return no([&] { return "needs " + r.memory.ToString() + " memory, nodes have " + pool.memory.ToString(); });
  }
  return true;
}

}  // namespace

std::string PoolShapeMismatch(const model::NodePool& pool, const model::ResourceRequest& r) {
  std::string why;
  ShapeServes(pool, r, &why);
  return why;
}

bool PoolShapeFits(const model::NodePool& pool, const model::ResourceRequest& r) {
  return ShapeServes(pool, r, nullptr);
}

GpuDemand DemandOn(const model::NodePool& pool, const model::ResourceRequest& r) {
  GpuDemand d;
  d.gpus = GpusPerNode(r);
  int64_t gpu_memory = pool.gpu.memory.milli() / 1000;
  bool fraction =
      r.is_fractional() || (r.gpus == 1 && r.nodes == 1 && r.gpu_memory.milli() > 0 && r.gpu_memory < pool.gpu.memory);
  if (!fraction) {
    d.memory_each = gpu_memory;
    return d;  // whole GPUs
  }
  int64_t memory = r.gpu_memory.milli() / 1000;
  int milli = static_cast<int>(r.gpu_share.milli());
  if (memory == 0 && milli > 0) memory = gpu_memory * milli / kMilliPerGpu;
  if (milli == 0 && memory > 0) milli = static_cast<int>((memory * kMilliPerGpu + gpu_memory - 1) / gpu_memory);
  if (milli == 0) milli = 1;
  d.needed_milli = std::min(milli, kMilliPerGpu);
  if (pool.gpu.sharing == model::GpuSharing::kNone) {
    d.memory_each = gpu_memory;
    return d;  // an unshared pool gives a whole GPU to a fraction
  }
  d.fractional = true;
  if (pool.gpu.sharing == model::GpuSharing::kMig) {
    std::optional<std::string> profile =
        r.mig_profile.empty() ? SmallestMigProfile(pool, memory, milli) : std::optional<std::string>(r.mig_profile);
    // A profile from a replayed snapshot may not parse: then no profile fits.
    std::optional<model::MigProfileName> parsed = profile ? model::ParseMigProfile(*profile) : std::nullopt;
    if (!parsed) return d;
    const model::MigProfileName& info = *parsed;
    d.mig_profile = *profile;
    d.mig_geometry = FindMigProfile(pool.gpu.model, d.mig_profile);
    d.mig_slices = info.compute_slices;
    d.milli_each = info.compute_slices * kMilliPerGpu / kMigComputeSlices;
    d.memory_each = std::min<int64_t>(int64_t{info.memory_gb} << 30, gpu_memory);
    return d;
  }
  d.milli_each = std::min(milli, kMilliPerGpu);
  d.memory_each = std::min(memory, gpu_memory);
  return d;
}

namespace {

// A node of `pool` with nothing on it.
NodeState EmptyNode(const model::NodePool& pool, int pool_index, std::string name) {
  NodeState node;
  node.name = std::move(name);
  node.pool = pool_index;
  node.free_cpu_milli = pool.cpu.milli();
  node.free_memory = pool.memory.milli() / 1000;
  node.cpu_limited = pool.cpu.milli() > 0;
  GpuState gpu;
  gpu.free_memory = pool.gpu.memory.milli() / 1000;
  node.gpus.assign(pool.gpu.count, gpu);
  return node;
}

}  // namespace

ClusterState BuildClusterState(const model::Cluster& cluster, const ObservedCluster* observed) {
  ClusterState state;
  state.cluster = &cluster;
  // No pod mix known here: the placer gives the state one that knows the plan's.
  if (Result<std::shared_ptr<NodePacker>> packer = NodePacker::Create(cluster, kDefaultPackingPolicy, nullptr);
      packer.ok()) {
    state.packer = std::move(*packer);
  }
  if (observed == nullptr) {
    for (size_t p = 0; p < cluster.node_pools.size(); ++p) {
      const model::NodePool& pool = cluster.node_pools[p];
      for (int i = 0; i < pool.count; ++i) {
        state.nodes.push_back(EmptyNode(pool, static_cast<int>(p), PoolNodeName(pool.name, i)));
      }
    }
    state.elastic_nodes_left = std::max(0, cluster.elasticity.max_nodes - cluster.present_nodes());
    state.next_node_index = static_cast<int>(state.nodes.size());
    return state;
  }
  if (!observed->healthy) return state;
  int next_suffix = 0;
  for (const ObservedNode& n : observed->nodes) {
    for (size_t p = 0; p < cluster.node_pools.size(); ++p) {
      const model::NodePool& pool = cluster.node_pools[p];
      if (pool.name != n.pool) continue;
      NodeState node = EmptyNode(pool, static_cast<int>(p), n.name);
      if (!n.gpus.empty()) {  // the cluster's own count wins over the pool's declaration
        GpuState gpu;
        gpu.free_memory = pool.gpu.memory.milli() / 1000;
        node.gpus.assign(n.gpus.size(), gpu);
      }
      node.provisioned = !n.ready;
      state.nodes.push_back(std::move(node));
      break;
    }
    // New nodes are named "<pool>-<n>" past every numeric suffix already present, so a
    // provisioned node never takes a present node's name.
    if (Result<ParsedNodeName> named = ParsePoolNodeName(n.name); named.ok()) {
      next_suffix = std::max(next_suffix, named->index + 1);
    }
  }
  state.elastic_nodes_left = std::max(0, cluster.elasticity.max_nodes - static_cast<int>(observed->nodes.size()));
  state.next_node_index = std::max(next_suffix, static_cast<int>(observed->nodes.size()));
  return state;
}

void CapToObserved(ClusterState& state, const ObservedCluster& observed) {
  for (const ObservedNode& seen : observed.nodes) {
    const int n = state.FindNodeIndex(seen.name);
    if (n < 0) continue;
    NodeState& node = state.nodes[static_cast<size_t>(n)];
    if (seen.free_cpu_milli >= 0) node.free_cpu_milli = std::min(node.free_cpu_milli, seen.free_cpu_milli);
    if (seen.free_memory >= 0) node.free_memory = std::min(node.free_memory, seen.free_memory);
    for (size_t g = 0; g < node.gpus.size() && g < seen.gpus.size(); ++g) {
      GpuState& gpu = node.gpus[g];
      const ObservedGpu& o = seen.gpus[g];
      if (o.free_milli < gpu.free_milli) {
        gpu.free_milli = std::max(0, o.free_milli);
        gpu.shared = gpu.shared || (gpu.free_milli > 0 && gpu.free_milli < kMilliPerGpu);
      }
      if (o.free_memory >= 0) gpu.free_memory = std::min(gpu.free_memory, o.free_memory);
      gpu.mig_slices_used = std::max(gpu.mig_slices_used, o.mig_slices_used);
    }
  }
  state.index_stale = true;
  ++state.generation;
}

bool SameCapacity(const ClusterState& a, const ClusterState& b) {
  return a.cluster == b.cluster && a.elastic_nodes_left == b.elastic_nodes_left &&
         a.next_node_index == b.next_node_index && a.nodes == b.nodes;
}

int ClusterState::FindNodeIndex(const std::string& name) const {
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].name == name) return static_cast<int>(n);
  }
  return -1;
}

namespace {

bool CpuAndMemoryFit(const NodeState& node, const model::ResourceRequest& r) {
  return !node.cpu_limited || (node.free_cpu_milli >= r.cpu.milli() && node.free_memory >= r.memory.milli() / 1000);
}

// The GPU a fractional demand takes on `node` (-1: none): the fullest shared GPU with
// room, else the first whole one; `only_gpu` >= 0 looks at that GPU alone.
int FractionGpu(const NodeState& node, const GpuDemand& d, const MigProfile* geometry, int only_gpu) {
  int best = -1;
  for (size_t g = 0; g < node.gpus.size(); ++g) {
    if (only_gpu >= 0 && static_cast<int>(g) != only_gpu) continue;
    const GpuState& gpu = node.gpus[g];
    // The cheap tests first: the MIG geometry is searched only on a GPU that could be taken.
    if (gpu.free_milli < d.milli_each || gpu.free_memory < d.memory_each) continue;
    if (gpu.free_milli == kMilliPerGpu && !gpu.shared && best >= 0) continue;
    const bool mig_room =
        d.mig_slices == 0 || (geometry != nullptr ? gpu.mig.FindStart(*geometry).has_value()
                                                  : gpu.mig_slices_used + d.mig_slices <= kMigComputeSlices);
    if (!mig_room) continue;
    if (best < 0 || !node.gpus[best].shared || (gpu.shared && gpu.free_milli < node.gpus[best].free_milli)) {
      best = static_cast<int>(g);
    }
  }
  return best;
}

// The share of the node's GPU capacity in use once `gpus` more GPUs of `milli_each` are
// taken (NodeFit::packing).
double PackingAfter(const NodeState& node, const model::NodePool& pool, int milli_each, int64_t gpus) {
  int64_t used = 0;
  for (const GpuState& gpu : node.gpus) used += kMilliPerGpu - gpu.free_milli;
  used += int64_t{milli_each} * gpus;
  return pool.gpu.count == 0 ? 0 : static_cast<double>(used) / (double{kMilliPerGpu} * pool.gpu.count);
}

// FitOnNode's answer without building the fit (FindNode asks it of every node).
bool FitsOnNode(const NodeState& node, const GpuDemand& d, const model::ResourceRequest& r) {
  if (!CpuAndMemoryFit(node, r)) return false;
  if (d.fractional) return FractionGpu(node, d, d.mig_geometry, -1) >= 0;
  return node.FreeWholeGpus() >= d.gpus;
}

}  // namespace

int WasteOf(const GpuDemand& d) { return std::max(0, d.milli_each - d.needed_milli); }

std::optional<NodeFit> FitOnNode(const NodeState& node, const model::NodePool& pool, const GpuDemand& d,
                                 const model::ResourceRequest& r, int only_gpu) {
  if (!CpuAndMemoryFit(node, r)) return std::nullopt;
  NodeFit fit;
  fit.milli_each = d.milli_each;
  fit.memory_each = d.memory_each;
  fit.mig_profile = d.mig_profile;
  // Models with a known MIG table get real slice placement; others count slices.
  const MigProfile* geometry = d.mig_geometry;
  if (d.fractional) {
    const int best = FractionGpu(node, d, geometry, only_gpu);
    if (best < 0) return std::nullopt;
    fit.gpus = {best};
    if (geometry != nullptr) fit.mig_start = *node.gpus[best].mig.FindStart(*geometry);
  } else {
    for (size_t g = 0; g < node.gpus.size() && static_cast<int>(fit.gpus.size()) < d.gpus; ++g) {
      if (node.gpus[g].free_milli == kMilliPerGpu && !node.gpus[g].shared) fit.gpus.push_back(static_cast<int>(g));
    }
    if (static_cast<int>(fit.gpus.size()) < d.gpus) return std::nullopt;
  }
  // Packing: the share of the node's GPU capacity in use after this placement.
  fit.packing = PackingAfter(node, pool, fit.milli_each, static_cast<int64_t>(fit.gpus.size()));
  fit.waste_milli = WasteOf(d);
  return fit;
}

PoolDemands DemandsOn(const model::Cluster& cluster, const model::ResourceRequest& request,
                      const std::vector<bool>& pool_allowed) {
  const std::vector<model::NodePool>& pools = cluster.node_pools;
  PoolDemands demands(pools.size());
  for (size_t p = 0; p < pools.size(); ++p) {
    if (pool_allowed[p] && PoolShapeFits(pools[p], request)) demands[p] = DemandOn(pools[p], request);
  }
  return demands;
}

std::optional<NodeChoice> ChooseNode(const ClusterState& state, const model::ResourceRequest& request, int only_node,
                                     const PoolDemands& demands) {
  // Nodes with room. The placer asks this thousands of times a pass, of clusters of tens
  // of nodes: the candidates stay on the stack unless the cluster is larger.
  constexpr size_t kOnStack = 32;
  std::array<PackingCandidate, kOnStack> on_stack;
  std::vector<PackingCandidate> on_heap;
  if (state.nodes.size() > kOnStack) on_heap.resize(state.nodes.size());
  PackingCandidate* found = on_heap.empty() ? on_stack.data() : on_heap.data();
  size_t count = 0;
  for (size_t n = 0; n < state.nodes.size(); ++n) {
    if (only_node >= 0 && static_cast<int>(n) != only_node) continue;
    const NodeState& node = state.nodes[n];
    const std::optional<GpuDemand>& demand = demands[static_cast<size_t>(node.pool)];
    if (!demand || !FitsOnNode(node, *demand, request)) continue;
    found[count++] = {static_cast<int>(n), &*demand};
  }
  const std::span<const PackingCandidate> candidates(found, count);
  if (candidates.empty()) return std::nullopt;
  // One node and nothing to choose on it (whole GPUs go to the lowest free ones, as the
  // policy's would): the policy's answer is known without asking.
  const bool forced = candidates.size() == 1 && !candidates.front().demand->fractional;
  std::optional<PackingChoice> choice =
      state.packer && !forced ? state.packer->Choose(state, request, candidates) : PackingChoice{0, -1};
  if (!choice) return std::nullopt;
  const PackingCandidate& chosen = candidates[choice->candidate];
  return NodeChoice{chosen.node, chosen.demand, choice->share_gpu};
}

double FitQualityOn(const NodeState& node, const model::NodePool& pool, const GpuDemand& d) {
  return NodeFit::FitQuality(PackingAfter(node, pool, d.milli_each, d.fractional ? 1 : d.gpus), WasteOf(d));
}

std::optional<std::pair<int, NodeFit>> FindNode(const ClusterState& state, const model::ResourceRequest& request,
                                                const std::vector<bool>& pool_allowed, int only_node,
                                                const PoolDemands* known_demands) {
  // The demand per pool, computed once: pools are few, nodes many.
  PoolDemands own_demands;
  if (known_demands == nullptr) own_demands = DemandsOn(*state.cluster, request, pool_allowed);
  const PoolDemands& demands = known_demands != nullptr ? *known_demands : own_demands;
  // The fit itself is built for the chosen node only.
  const std::optional<NodeChoice> choice = ChooseNode(state, request, only_node, demands);
  if (!choice) return std::nullopt;
  const NodeState& node = state.nodes[static_cast<size_t>(choice->node)];
  const model::NodePool& pool = state.cluster->node_pools[node.pool];
  std::optional<NodeFit> fit;
  // The policy's GPU, when the placer's own checks (GPU memory, MIG geometry) allow it.
  if (choice->share_gpu >= 0) fit = FitOnNode(node, pool, *choice->demand, request, choice->share_gpu);
  if (!fit) fit = FitOnNode(node, pool, *choice->demand, request);
  if (!fit) return std::nullopt;  // FitsOnNode said it fits: not reached
  return std::make_pair(choice->node, std::move(*fit));
}

std::optional<int> ProvisionNode(ClusterState& state, const model::ResourceRequest& request,
                                 const std::vector<bool>& pool_allowed) {
  if (state.elastic_nodes_left <= 0) return std::nullopt;
  const model::Cluster& cluster = *state.cluster;
  for (size_t p = 0; p < cluster.node_pools.size(); ++p) {
    const model::NodePool& pool = cluster.node_pools[p];
    if (!pool_allowed[p] || !PoolShapeFits(pool, request)) continue;
    NodeState node = EmptyNode(pool, static_cast<int>(p), PoolNodeName(pool.name, state.next_node_index++));
    node.provisioned = true;
    state.nodes.push_back(std::move(node));
    --state.elastic_nodes_left;
    state.index_stale = true;
    ++state.generation;
    return static_cast<int>(state.nodes.size() - 1);
  }
  return std::nullopt;
}

std::optional<int> AddObservedNode(ClusterState& state, const std::string& name) {
  if (state.elastic_nodes_left <= 0) return std::nullopt;
  const model::Cluster& cluster = *state.cluster;
  Result<ParsedNodeName> parsed = ParsePoolNodeName(name);
  if (!parsed.ok()) return std::nullopt;  // not a node a pool's elasticity names
  for (size_t p = 0; p < cluster.node_pools.size(); ++p) {
    const model::NodePool& pool = cluster.node_pools[p];
    if (pool.name != parsed->pool) continue;
    NodeState node = EmptyNode(pool, static_cast<int>(p), name);
    node.provisioned = true;
    state.nodes.push_back(std::move(node));
    --state.elastic_nodes_left;
    state.next_node_index = std::max(state.next_node_index, parsed->index + 1);
    state.index_stale = true;
    ++state.generation;
    return static_cast<int>(state.nodes.size() - 1);
  }
  return std::nullopt;
}

NodeFit FitOfBinding(const model::NodePool& pool, const model::ResourceRequest& request, const std::vector<int>& gpus,
                     int gpu_milli_each, const std::string& mig_profile, int mig_start) {
  NodeFit fit;
  fit.gpus = gpus;
  fit.milli_each = gpu_milli_each;
  fit.mig_profile = mig_profile;
  fit.mig_start = mig_start;
  const int64_t gpu_memory = pool.gpu.memory.milli() / 1000;
  fit.memory_each = gpu_memory;
  if (PoolShapeFits(pool, request)) {
    fit.memory_each = DemandOn(pool, request).memory_each;
  } else if (gpu_milli_each < kMilliPerGpu) {
    fit.memory_each = gpu_memory * gpu_milli_each / kMilliPerGpu;
  }
  return fit;
}

bool MayFitWholeGpus(const ClusterState& state, const model::ResourceRequest& request) {
  if (request.is_fractional() || request.gpu_memory.milli() > 0) return true;
  const int per_node = request.nodes > 1 ? request.gpus_per_node : request.gpus;
  const int members = std::max(1, request.nodes);
  if (per_node <= 0) return true;
  if (state.index_stale) {
    state.nodes_with_free.assign(1, static_cast<int>(state.nodes.size()));
    for (const NodeState& node : state.nodes) {
      const int free = node.FreeWholeGpus();
      if (static_cast<int>(state.nodes_with_free.size()) <= free) state.nodes_with_free.resize(free + 1, 0);
      for (int k = 1; k <= free; ++k) ++state.nodes_with_free[k];
    }
    state.index_stale = false;
  }
  if (Spreads(request)) {  // any nodes will do: are there enough free GPUs in all?
    int64_t free = 0;
    for (size_t k = 1; k < state.nodes_with_free.size(); ++k) free += state.nodes_with_free[k];
    return free >= per_node;
  }
  if (per_node >= static_cast<int>(state.nodes_with_free.size())) return false;
  return state.nodes_with_free[per_node] >= members;
}

void Reserve(ClusterState& state, int node_index, const NodeFit& fit, const model::ResourceRequest& request) {
  NodeState& node = state.nodes[node_index];
  if (node.cpu_limited) {
    node.free_cpu_milli -= request.cpu.milli();
    node.free_memory -= request.memory.milli() / 1000;
  }
  for (int g : fit.gpus) {
    GpuState& gpu = node.gpus[g];
    gpu.free_milli -= fit.milli_each;
    gpu.free_memory -= fit.memory_each;
    if (fit.milli_each < kMilliPerGpu || !fit.mig_profile.empty()) gpu.shared = true;
    if (!fit.mig_profile.empty()) {
      gpu.mig_slices_used += model::MigComputeSlices(fit.mig_profile);  // bindings come from connectors too
      const model::NodePool& pool = state.cluster->node_pools[node.pool];
      if (const MigProfile* geometry = FindMigProfile(pool.gpu.model, fit.mig_profile)) {
        // A binding from an earlier plan may not know its start: take where it fits.
        std::optional<int> start = fit.mig_start >= 0 && gpu.mig.CanPlaceAt(*geometry, fit.mig_start)
                                       ? std::optional<int>(fit.mig_start)
                                       : gpu.mig.FindStart(*geometry);
        if (start) gpu.mig.Place(*geometry, *start);
      }
    }
  }
  state.index_stale = true;
  ++state.generation;
}

void Release(ClusterState& state, int node_index, const NodeFit& fit, const model::ResourceRequest& request) {
  NodeState& node = state.nodes[node_index];
  if (node.cpu_limited) {
    node.free_cpu_milli += request.cpu.milli();
    node.free_memory += request.memory.milli() / 1000;
  }
  const model::NodePool& pool = state.cluster->node_pools[node.pool];
  for (int g : fit.gpus) {
    GpuState& gpu = node.gpus[g];
    gpu.free_milli = std::min(kMilliPerGpu, gpu.free_milli + fit.milli_each);
    gpu.free_memory = std::min<int64_t>(pool.gpu.memory.milli() / 1000, gpu.free_memory + fit.memory_each);
    if (!fit.mig_profile.empty()) {
      gpu.mig_slices_used = std::max(0, gpu.mig_slices_used - model::MigComputeSlices(fit.mig_profile));
      if (const MigProfile* geometry = FindMigProfile(pool.gpu.model, fit.mig_profile)) {
        int start = fit.mig_start;
        for (int s : geometry->starts) {  // unknown start: an occupied placement of this profile
          if (start >= 0) break;
          uint8_t mask = static_cast<uint8_t>(((1u << geometry->memory_slices) - 1u) << s);
          if ((gpu.mig.occupied() & mask) == mask) start = s;
        }
        if (start >= 0) gpu.mig.Release(*geometry, start);
      }
    }
    if (gpu.free_milli == kMilliPerGpu) {  // nothing left on it: whole again
      gpu.shared = false;
      gpu.mig_slices_used = 0;
      gpu.mig = MigLayout();
    }
  }
  state.index_stale = true;
  ++state.generation;
}

}  // namespace gpufed::placement
