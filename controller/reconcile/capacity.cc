#include "controller/reconcile/capacity.h"

#include <algorithm>

namespace gpufed::reconcile {
namespace {

const model::NodePool* FindPool(const model::Cluster& c, const std::string& name) {
  for (const model::NodePool& p : c.node_pools) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace

ResidualFleet BuildResidualFleet(const model::Config& config, const std::map<std::string, ObservedCluster>& observed) {
  ResidualFleet fleet;
  fleet.config = config;
  for (model::Cluster& cluster : fleet.config.clusters) {
    const model::Cluster* declared = config.FindCluster(cluster.metadata.name);
    std::vector<model::NodePool> pools = declared->node_pools;
    for (model::NodePool& p : pools) p.count = 0;  // kept for elastic growth only
    auto it = observed.find(cluster.metadata.name);
    if (it == observed.end() || !it->second.healthy) {
      // Unknown or unhealthy: nothing fits, nothing may be provisioned.
      cluster.node_pools = pools;
      cluster.elasticity.max_nodes = 0;
      continue;
    }
    auto& virtual_nodes = fleet.nodes[cluster.metadata.name];
    int real_present = 0;
    for (const connectors::ObservedNode& node : it->second.observation.nodes) {
      ++real_present;
      const model::NodePool* pool = FindPool(*declared, node.pool);
      if (pool == nullptr || !node.ready) continue;
      ResidualFleet::VirtualNode whole{node.name, {}};
      for (size_t g = 0; g < node.gpus.size(); ++g) {
        const connectors::ObservedGpu& gpu = node.gpus[g];
        if (gpu.free_milli >= 1000 && gpu.mig_slices_used == 0 && gpu.free_memory >= pool->gpu.memory.milli() / 1000) {
          whole.gpus.push_back(static_cast<int>(g));
        } else if (gpu.free_milli > 0 && pool->gpu.sharing != model::GpuSharing::kNone) {
          model::NodePool part = *pool;
          part.name = node.name + "/gpu" + std::to_string(g);
          part.count = 1;
          part.gpu.count = 1;
          part.gpu.memory = Quantity::FromMilli(gpu.free_memory * 1000);
          if (pool->cpu.milli() > 0) part.cpu = Quantity::FromMilli(std::max<int64_t>(0, node.free_cpu_milli));
          if (pool->memory.milli() > 0) part.memory = Quantity::FromMilli(std::max<int64_t>(0, node.free_memory) * 1000);
          pools.push_back(part);
          virtual_nodes[part.name + "-0"] = {node.name, {static_cast<int>(g)}};
        }
      }
      if (whole.gpus.empty()) continue;
      model::NodePool v = *pool;
      v.name = node.name;
      v.count = 1;
      v.gpu.count = static_cast<int>(whole.gpus.size());
      if (pool->cpu.milli() > 0) v.cpu = Quantity::FromMilli(std::max<int64_t>(0, node.free_cpu_milli));
      if (pool->memory.milli() > 0) v.memory = Quantity::FromMilli(std::max<int64_t>(0, node.free_memory) * 1000);
      pools.push_back(v);
      virtual_nodes[v.name + "-0"] = whole;
    }
    int virtual_present = 0;
    for (const model::NodePool& p : pools) virtual_present += p.count;
    cluster.node_pools = pools;
    if (declared->elasticity.max_nodes > 0) {
      cluster.elasticity.max_nodes = virtual_present + std::max(0, declared->elasticity.max_nodes - real_present);
    }
  }
  return fleet;
}

Status MapBinding(const ResidualFleet& fleet, const model::Config& config, const placement::Binding& binding,
                  std::vector<connectors::NodeAssignment>& nodes, std::string& provision_pool) {
  const model::Cluster* cluster = config.FindCluster(binding.cluster);
  if (cluster == nullptr) return InvalidArgument("binding to unknown cluster " + binding.cluster);
  auto cit = fleet.nodes.find(binding.cluster);
  for (size_t i = 0; i < binding.nodes.size(); ++i) {
    const std::string& name = binding.nodes[i];
    const std::vector<int>& gpus = i < binding.gpus.size() ? binding.gpus[i] : std::vector<int>{};
    if (cit != fleet.nodes.end()) {
      auto nit = cit->second.find(name);
      if (nit != cit->second.end()) {
        connectors::NodeAssignment a{nit->second.node, {}};
        for (int g : gpus) {
          if (g < 0 || g >= static_cast<int>(nit->second.gpus.size())) return InvalidArgument("GPU index out of range");
          a.gpus.push_back(nit->second.gpus[g]);
        }
        nodes.push_back(a);
        continue;
      }
    }
    // A node the placer provisions: "<declared pool>-<n>"; the longest matching pool wins.
    const model::NodePool* best = nullptr;
    for (const model::NodePool& p : cluster->node_pools) {
      if (name.rfind(p.name + "-", 0) == 0 && (best == nullptr || p.name.size() > best->name.size())) best = &p;
    }
    if (best == nullptr) return InvalidArgument("binding names unknown node " + name);
    provision_pool = best->name;
    nodes.push_back({"", gpus});
  }
  return Status::Ok();
}

}  // namespace gpufed::reconcile
