#include "controller/placement/inventory.h"

#include <gtest/gtest.h>

#include "tests/testutil/fleet_builder.h"

namespace gpufed::placement {
namespace {

model::NodePool MigPool() {
  model::NodePool pool;
  pool.name = "mig";
  pool.count = 1;
  pool.gpu = {"A100-40GB", 2, Quantity::FromUnits(int64_t{40} << 30), false, model::GpuSharing::kMig,
              {"1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb"}};
  return pool;
}

TEST(Inventory, MapsFractionsToTheSmallestMigProfile) {
  model::ResourceRequest r;
  r.gpus = 1;
  r.gpu_memory = Quantity::FromUnits(int64_t{4} << 30);
  EXPECT_EQ(DemandOn(MigPool(), r).mig_profile, "1g.5gb");
  r.gpu_memory = Quantity::FromUnits(int64_t{12} << 30);
  EXPECT_EQ(DemandOn(MigPool(), r).mig_profile, "3g.20gb");
  r.gpu_memory = Quantity();
  r.gpu_share = Quantity::FromMilli(500);
  EXPECT_EQ(DemandOn(MigPool(), r).mig_profile, "7g.40gb");  // 3.5 compute slices -> 7g
}

TEST(Inventory, NeverExceedsSevenMigSlicesPerGpu) {
  model::Cluster c = testutil::MakeCluster("c", "onprem", "eu", 0, 0);
  c.node_pools = {MigPool()};
  ClusterState state = BuildClusterState(c);
  model::ResourceRequest r;
  r.gpus = 1;
  r.mig_profile = "3g.20gb";
  std::vector<bool> allowed = {true};
  int placed = 0;
  while (auto fit = FindNode(state, r, allowed)) {
    Reserve(state, fit->first, fit->second, r);
    ++placed;
  }
  EXPECT_EQ(placed, 4);  // two 3g instances per GPU (6 of 7 slices), two GPUs
  for (const GpuState& g : state.nodes[0].gpus) EXPECT_LE(g.mig_slices_used, kMigComputeSlices);
}

TEST(Inventory, WholeGpusNeverLandOnSharedGpus) {
  model::Cluster c = testutil::MakeCluster("c", "onprem", "eu", 1, 2);
  c.node_pools[0].gpu.sharing = model::GpuSharing::kMemory;
  ClusterState state = BuildClusterState(c);
  std::vector<bool> allowed = {true};
  model::ResourceRequest small;
  small.gpus = 1;
  small.gpu_memory = Quantity::FromUnits(int64_t{4} << 30);
  auto fit = FindNode(state, small, allowed);
  ASSERT_TRUE(fit);
  Reserve(state, fit->first, fit->second, small);
  model::ResourceRequest two;
  two.gpus = 2;
  EXPECT_FALSE(FindNode(state, two, allowed));
  two.gpus = 1;
  auto whole = FindNode(state, two, allowed);
  ASSERT_TRUE(whole);
  EXPECT_NE(whole->second.gpus[0], fit->second.gpus[0]);
}

TEST(Inventory, ExplainsShapeMismatches) {
  model::NodePool pool = testutil::MakeCluster("c", "onprem", "eu", 1, 4).node_pools[0];
  pool.gpu.nvlink = false;
  model::ResourceRequest r;
  r.gpus = 8;
  EXPECT_EQ(PoolShapeMismatch(pool, r), "");  // topology any: may spread over nodes
  r.topology = model::Topology::kSameNode;
  EXPECT_EQ(PoolShapeMismatch(pool, r), "needs 8 GPUs on one node, nodes have 4");
  r.gpus = 2;
  EXPECT_EQ(PoolShapeMismatch(pool, r), "same-node topology needs NVLink, pool pool has none");
  r.gpu_models = {"H100-80GB"};
  EXPECT_EQ(PoolShapeMismatch(pool, r), "GPU model A100-80GB not in the allowed models");
}

}  // namespace
}  // namespace gpufed::placement
