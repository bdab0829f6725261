#pragma once
// Builders for small fleets and workloads in placer tests: readable one-liners instead
// of YAML, with the same defaults the loader applies.
#include <string>
#include <vector>

#include "controller/common/money.h"
#include "controller/model/config.h"

namespace gpufed::testutil {

inline model::Cluster MakeCluster(const std::string& name, const std::string& provider, const std::string& zone,
                                  int nodes, int gpus_per_node, const std::string& model = "A100-80GB",
                                  const std::string& price = "1.00") {
  model::Cluster c;
  c.metadata.name = name;
  c.provider = provider;
  c.zone = zone;
  c.attributes.encryption_at_rest = true;
  model::NodePool pool;
  pool.name = "pool";
  pool.count = nodes;
  pool.cpu = Quantity::FromUnits(64);
  pool.memory = Quantity::FromUnits(int64_t{512} << 30);
  pool.gpu.model = model;
  pool.gpu.count = gpus_per_node;
  pool.gpu.memory = Quantity::FromUnits(int64_t{80} << 30);
  pool.gpu.nvlink = true;
  c.node_pools.push_back(pool);
  c.pricing.currency = "EUR";
  c.pricing.gpu_hour[model] = *Money::Parse(price, "EUR");
  c.pricing.egress_per_gib = Money(0, "EUR");
  return c;
}

inline model::Workload MakeWorkload(const std::string& name, const std::string& tenant, int gpus) {
  model::Workload w;
  w.metadata.name = name;
  w.tenant = tenant;
  w.resources.gpus = gpus;
  w.priority = 500;
  w.has_priority = true;
  return w;
}

// An on-prem Cluster document in the EU with one node pool of `nodes` x `gpus` GPUs of
// `model` (80Gi each, NVLink), for tests that load YAML.
inline std::string OnpremClusterYaml(const std::string& name, const std::string& pool, int nodes,
                                     const std::string& model = "A100-80GB", int gpus = 8) {
  return "apiVersion: gpufed/v1alpha1\nkind: Cluster\nmetadata: {name: " + name +
         "}\nspec:\n  provider: onprem\n  zone: eu\n  connector: {type: sim}\n  nodePools: [{name: " + pool +
         ", count: " + std::to_string(nodes) + ", gpu: {model: " + model + ", count: " + std::to_string(gpus) +
         ", memory: 80Gi, nvlink: true}}]\n";
}

inline model::Tenant MakeTenant(const std::string& name, double weight = 1) {
  model::Tenant t;
  t.metadata.name = name;
  t.weight = weight;
  return t;
}

enum class Sharing { kWhole, kMig, kMemory };
// Makes the cluster's first pool share its GPUs: MIG (A100-40GB with four profiles,
// priced) or memory shares; kWhole leaves it as it is.
inline void ShareGpus(model::Cluster& cluster, Sharing sharing) {
  model::NodePool& pool = cluster.node_pools[0];
  if (sharing == Sharing::kMig) {
    pool.gpu.sharing = model::GpuSharing::kMig;
    pool.gpu.memory = Quantity::FromUnits(int64_t{40} << 30);
    pool.gpu.model = "A100-40GB";
    pool.gpu.mig_profiles = {"1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb"};
    cluster.pricing.gpu_hour["A100-40GB"] = Money(700000, "EUR");
  } else if (sharing == Sharing::kMemory) {
    pool.gpu.sharing = model::GpuSharing::kMemory;
  }
}

}  // namespace gpufed::testutil
