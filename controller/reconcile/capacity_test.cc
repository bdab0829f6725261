#include "controller/reconcile/capacity.h"

#include <gtest/gtest.h>

namespace gpufed::reconcile {
namespace {

model::Config OneCluster(int max_nodes) {
  model::Config config;
  model::Cluster c;
  c.metadata.name = "c";
  c.provider = "onprem";
  model::NodePool pool;
  pool.name = "dgx";
  pool.count = 2;
  pool.gpu.model = "A100";
  pool.gpu.count = 8;
  pool.gpu.memory = Quantity::FromMilli((int64_t{80} << 30) * 1000);
  c.node_pools.push_back(pool);
  c.elasticity.max_nodes = max_nodes;
  config.clusters.push_back(c);
  return config;
}

connectors::ObservedNode Node(const std::string& name, int busy) {
  connectors::ObservedNode n{name, "dgx", true, 0, 0, {}};
  for (int g = 0; g < 8; ++g) n.gpus.push_back({g < busy ? 0 : 1000, g < busy ? 0 : int64_t{80} << 30, 0});
  return n;
}

TEST(ResidualFleet, OffersOnlyFreeWholeGpusAndMapsThemBack) {
  model::Config config = OneCluster(0);
  ObservedCluster seen{true, {}};
  seen.observation.nodes = {Node("dgx-0", 8), Node("dgx-1", 3)};
  ResidualFleet fleet = BuildResidualFleet(config, {{"c", seen}});
  const model::Cluster& c = fleet.config.clusters[0];
  int gpus = 0;
  for (const auto& p : c.node_pools) gpus += p.count * p.gpu.count;
  EXPECT_EQ(gpus, 5);
  placement::Binding b;
  b.cluster = "c";
  b.nodes = {"dgx-1-0"};
  b.gpus = {{0, 1}};
  std::vector<connectors::NodeAssignment> nodes;
  std::string pool;
  ASSERT_TRUE(MapBinding(fleet, config, b, nodes, pool).ok());
  EXPECT_EQ(nodes[0].node, "dgx-1");
  EXPECT_EQ(nodes[0].gpus, (std::vector<int>{3, 4}));
  EXPECT_TRUE(pool.empty());
}

TEST(ResidualFleet, AnUnhealthyClusterOffersNothing) {
  model::Config config = OneCluster(4);
  ResidualFleet fleet = BuildResidualFleet(config, {{"c", ObservedCluster{false, {}}}});
  for (const auto& p : fleet.config.clusters[0].node_pools) EXPECT_EQ(p.count, 0);
  EXPECT_EQ(fleet.config.clusters[0].elasticity.max_nodes, 0);
}

TEST(ResidualFleet, KeepsElasticHeadroomAndMapsProvisionedNodesToTheirPool) {
  model::Config config = OneCluster(4);
  ObservedCluster seen{true, {}};
  seen.observation.nodes = {Node("dgx-0", 8), Node("dgx-1", 0)};
  ResidualFleet fleet = BuildResidualFleet(config, {{"c", seen}});
  // One virtual node (dgx-1) plus two more the cluster may still add.
  EXPECT_EQ(fleet.config.clusters[0].elasticity.max_nodes, 3);
  placement::Binding b;
  b.cluster = "c";
  b.nodes = {"dgx-7"};
  b.gpus = {{0}};
  std::vector<connectors::NodeAssignment> nodes;
  std::string pool;
  ASSERT_TRUE(MapBinding(fleet, config, b, nodes, pool).ok());
  EXPECT_EQ(pool, "dgx");
  EXPECT_TRUE(nodes[0].node.empty());
}

}  // namespace
}  // namespace gpufed::reconcile
