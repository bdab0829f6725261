#include "controller/placement/search.h"

#include <algorithm>

namespace gpufed::placement {
namespace {

// The pool of the first node of a fit, or of the node ProvisionNode would add.
int PoolOf(const ClusterState& state, int node, const model::ResourceRequest& r, const std::vector<bool>& allowed) {
  if (node < static_cast<int>(state.nodes.size())) return state.nodes[node].pool;
  const model::Cluster& cluster = *state.cluster;
  for (size_t p = 0; p < cluster.node_pools.size(); ++p) {
    if (allowed[p] && PoolShapeFits(cluster.node_pools[p], r)) return static_cast<int>(p);
  }
  return -1;
}

std::optional<Placement> SingleNode(const ClusterState& state, const model::ResourceRequest& r,
                                    const std::vector<bool>& allowed, int only_node, const PoolDemands* demands) {
  Placement placement;
  if (auto found = FindNode(state, r, allowed, only_node, demands)) {
    placement.nodes.push_back(std::move(*found));
  } else if (only_node < 0 && state.elastic_nodes_left > 0) {
    ClusterState trial = state;
    if (!ProvisionNode(trial, r, allowed)) return std::nullopt;
    auto fit = FindNode(trial, r, allowed, -1, demands);
    if (!fit) return std::nullopt;
    placement.nodes.push_back(std::move(*fit));
    placement.provisions = true;
  } else {
    return std::nullopt;
  }
  return placement;
}

// A multi-node gang: all members in this cluster, one per node, or nothing.
std::optional<Placement> Gang(const ClusterState& state, const model::ResourceRequest& r,
                              const std::vector<bool>& allowed) {
  Placement placement;
  ClusterState trial = state;
  for (int member = 0; member < r.nodes; ++member) {
    auto found = FindNode(trial, r, allowed);
    if (!found) {
      auto added = ProvisionNode(trial, r, allowed);
      if (added) found = FindNode(trial, r, allowed);
      if (added) placement.provisions = true;
    }
    if (!found) return std::nullopt;
    for (GpuState& g : trial.nodes[found->first].gpus) g.free_milli = 0;  // one member per node
    placement.nodes.push_back(std::move(*found));
  }
  return placement;
}

// Whole GPUs `r` could take on `node` now (0 when its CPU or memory is short).
int FreeFor(const NodeState& node, const model::ResourceRequest& r) {
  if (node.cpu_limited && (node.free_cpu_milli < r.cpu.milli() || node.free_memory < r.memory.milli() / 1000)) return 0;
  return node.FreeWholeGpus();
}

// Spreads `r` over the fewest nodes of pool `p`: the present nodes with the most free
// GPUs, the last one the tightest that holds the rest; elastic nodes only for what the
// present nodes cannot hold.
std::optional<Placement> SpreadOnPool(const ClusterState& state, const model::ResourceRequest& r, int p,
                                      int only_node) {
  const model::NodePool& pool = state.cluster->node_pools[p];
  ClusterState trial = state;
  std::vector<std::pair<int, int>> free;  // (free GPUs, node), most free first
  int total = 0;
  for (size_t n = 0; n < trial.nodes.size(); ++n) {
    if (trial.nodes[n].pool != p || (only_node >= 0 && static_cast<int>(n) != only_node)) continue;
    const int k = FreeFor(trial.nodes[n], r);
    if (k > 0) free.emplace_back(k, static_cast<int>(n));
    total += k;
  }
  Placement placement;
  placement.pool = p;
  std::vector<bool> only_this(state.cluster->node_pools.size(), false);
  only_this[p] = true;
  while (total < r.gpus && only_node < 0) {
    std::optional<int> added = ProvisionNode(trial, r, only_this);
    if (!added) return std::nullopt;
    const int k = FreeFor(trial.nodes[*added], r);
    if (k == 0) return std::nullopt;
    free.emplace_back(k, *added);
    total += k;
    placement.provisions = true;
  }
  if (total < r.gpus) return std::nullopt;
  std::stable_sort(free.begin(), free.end(), [&](const auto& a, const auto& b) {
    const bool added_a = a.second >= static_cast<int>(state.nodes.size());
    const bool added_b = b.second >= static_cast<int>(state.nodes.size());
    if (added_a != added_b) return added_b;  // present nodes first
    return a.first > b.first;
  });
  std::vector<std::pair<int, int>> chosen;  // (node, GPUs taken)
  int left = r.gpus;
  size_t next = 0;
  while (left > free[next].first) {
    chosen.emplace_back(free[next].second, free[next].first);
    left -= free[next].first;
    ++next;
  }
  // The rest goes to the tightest remaining node that holds it, so bigger free blocks stay whole.
  size_t last = next;
  for (size_t i = next; i < free.size(); ++i) {
    if (free[i].first >= left && free[i].first < free[last].first) last = i;
  }
  chosen.emplace_back(free[last].second, left);
  for (const auto& [node, take] : chosen) {
    GpuDemand demand = DemandOn(pool, r);
    demand.gpus = take;
    std::optional<NodeFit> fit = FitOnNode(trial.nodes[node], pool, demand, r);
    if (!fit) return std::nullopt;
    placement.nodes.emplace_back(node, std::move(*fit));
  }
  return placement;
}

std::optional<Placement> Spread(const ClusterState& state, const model::ResourceRequest& r,
                                const std::vector<bool>& allowed, int only_node) {
  std::optional<Placement> best;
  const model::Cluster& cluster = *state.cluster;
  for (size_t p = 0; p < cluster.node_pools.size(); ++p) {
    if (!allowed[p] || !PoolShapeFits(cluster.node_pools[p], r)) continue;
    std::optional<Placement> found = SpreadOnPool(state, r, static_cast<int>(p), only_node);
    if (!found) continue;
    if (!best || std::make_pair(found->provisions, found->nodes.size()) <
                     std::make_pair(best->provisions, best->nodes.size())) {
      best = std::move(found);
    }
  }
  return best;
}

}  // namespace

std::optional<Placement> FindPlacement(const ClusterState& state, const model::ResourceRequest& r,
                                       const std::vector<bool>& allowed, int only_node, const PoolDemands* demands) {
  std::optional<Placement> placement;
  if (r.nodes > 1) {
    if (only_node < 0) placement = Gang(state, r, allowed);
  } else {
    placement = SingleNode(state, r, allowed, only_node, demands);
    if (!placement && Spreads(r)) placement = Spread(state, r, allowed, only_node);
  }
  if (placement && placement->pool < 0) placement->pool = PoolOf(state, placement->nodes.front().first, r, allowed);
  return placement;
}

std::vector<int> ApplyPlacement(ClusterState& state, const Placement& placement, const model::ResourceRequest& r) {
  std::vector<bool> allowed(state.cluster->node_pools.size(), false);
  allowed[placement.pool] = true;
  std::vector<int> used;
  for (const auto& [node, fit] : placement.nodes) {
    int index = node;
    if (index >= static_cast<int>(state.nodes.size())) index = *ProvisionNode(state, r, allowed);
    Reserve(state, index, fit, r);
    used.push_back(index);
  }
  return used;
}

}  // namespace gpufed::placement
