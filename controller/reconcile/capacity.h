#pragma once
// Expresses observed free capacity as a model::Config the placer can plan against.
//
// Why: the placer (placement/plan.h at the time of writing) builds its inventory from
// the Clusters' declared node pools and has no input for capacity already in use. Until
// it accepts running work in its Snapshot (issue 5), the loop hands it a "residual"
// fleet: every observed node becomes its own single-node pool holding only its free
// whole GPUs, and every partly used GPU (a MIG or memory-shared GPU with room left)
// becomes a one-GPU pool with the memory left. The declared pools stay first with
// count 0, so elastic growth still adds nodes of the declared shape. Policy rules see
// the same pool attributes (model, memory, sharing, spot), so verdicts do not change.
// Limits: MIG slices already used on a GPU are not expressible (the connector refuses
// an over-committed slice and the workload is planned again).
#include <map>
#include <string>
#include <vector>

#include "connectors/core/connector.h"
#include "controller/model/config.h"
#include "controller/placement/plan.h"

namespace gpufed::reconcile {

struct ObservedCluster {
  bool healthy = false;                // observed, and answering
  connectors::Observation observation;
};

struct ResidualFleet {
  model::Config config;  // a copy of the active config with clusters reduced to free capacity
  struct VirtualNode {
    std::string node;                  // the real node
    std::vector<int> gpus;             // real GPU index for each virtual GPU index
  };
  // By cluster, then by the node name the placer uses ("<virtual pool>-0").
  std::map<std::string, std::map<std::string, VirtualNode>> nodes;
};

ResidualFleet BuildResidualFleet(const model::Config& config, const std::map<std::string, ObservedCluster>& observed);

// Maps a placer binding on the residual fleet back to real nodes and GPUs. Members the
// placer put on a node it provisions get an empty node and `provision_pool` is set.
// InvalidArgument when the binding names a node the fleet does not have.
Status MapBinding(const ResidualFleet& fleet, const model::Config& config, const placement::Binding& binding,
                  std::vector<connectors::NodeAssignment>& nodes, std::string& provision_pool);

}  // namespace gpufed::reconcile
