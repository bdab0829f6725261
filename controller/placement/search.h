#pragma once
// The capacity search: where on one cluster a request fits now. Shared by the placer
// (Placer::FindCandidate, preemption) and by PolicyTests that set up running work, so
// a test's "given" state is bound exactly as the placer binds.
#include <optional>
#include <utility>
#include <vector>

#include "controller/placement/inventory.h"

namespace gpufed::placement {

struct Placement {
  // One fit per node used, in order. An index at or past the state's node count is a
  // node elasticity adds (ApplyPlacement adds it).
  std::vector<std::pair<int, NodeFit>> nodes;
  int pool = -1;           // the node pool of every node used
  bool provisions = false;  // adds at least one elastic node
};

// Where `request` fits on `state`, or nothing:
//   - single-node work: the best node (FindNode), else a node elasticity adds;
//   - a multi-node gang: one member per node, adding nodes as needed;
//   - topology any that no one node can hold (Spreads): the fewest nodes of one pool,
//     nodes with the most free GPUs first and the last one the tightest that takes the
//     rest, adding nodes only when the present ones cannot hold it.
// `only_node` >= 0 restricts the search to that node (no elastic nodes). `demands`: see
// FindNode.
std::optional<Placement> FindPlacement(const ClusterState& state, const model::ResourceRequest& request,
                                       const std::vector<bool>& pool_allowed, int only_node = -1,
                                       const PoolDemands* demands = nullptr);

// Reserves `placement` on `state`, adding the elastic nodes it counts on; returns the
// index of each node used, in order.
std::vector<int> ApplyPlacement(ClusterState& state, const Placement& placement, const model::ResourceRequest& request);

}  // namespace gpufed::placement
