#include "controller/placement/inventory.h"

#include <gtest/gtest.h>

#include <random>

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

// The placer's fit cache ranks a cluster by ChooseNode and FitQualityOn, without the fit
// FindNode builds: on random states of shared, MIG and whole-GPU pools, both name the
// same node with the same quality, and agree on where nothing fits. Small clusters keep
// ChooseNode's candidates on the stack, large ones (over 32 nodes) on the heap.
class ChooseNodeProperty : public ::testing::TestWithParam<int> {};

TEST_P(ChooseNodeProperty, AgreesWithFindingTheFit) {
  const int nodes_per_pool = GetParam();
  std::mt19937 rng(7);
  model::Cluster c = testutil::MakeCluster("c", "onprem", "eu", nodes_per_pool, 8);
  model::NodePool shared = c.node_pools[0];
  shared.name = "shared";
  shared.gpu.sharing = model::GpuSharing::kMemory;
  model::NodePool mig = MigPool();
  mig.count = nodes_per_pool;
  c.node_pools.push_back(shared);
  c.node_pools.push_back(mig);
  const std::vector<bool> allowed(c.node_pools.size(), true);
  int compared = 0, chosen = 0;
  const int steps = 30 * nodes_per_pool;  // enough to fill the nodes
  for (int round = 0; round < 20; ++round) {
    ClusterState state = BuildClusterState(c);
    for (int step = 0; step < steps; ++step) {
      model::ResourceRequest r;
      r.gpus = 1;
      switch (rng() % 4) {
        case 0: r.gpus = 1 + static_cast<int>(rng() % 4); break;
        case 1: r.gpu_memory = Quantity::FromUnits(int64_t{2 + static_cast<int>(rng() % 14)} << 30); break;
        case 2: r.mig_profile = rng() % 2 == 0 ? "1g.5gb" : "3g.20gb"; break;
        default: r.gpu_share = Quantity::FromMilli(250 * (1 + static_cast<int>(rng() % 3))); break;
      }
      const PoolDemands demands = DemandsOn(c, r, allowed);
      const std::optional<NodeChoice> choice = ChooseNode(state, r, -1, demands);
      const auto fit = FindNode(state, r, allowed, -1, &demands);
      ++compared;
      ASSERT_EQ(choice.has_value(), fit.has_value()) << "round " << round << " step " << step;
      if (!fit) continue;
      ++chosen;
      ASSERT_EQ(choice->node, fit->first);
      const NodeState& node = state.nodes[static_cast<size_t>(fit->first)];
      EXPECT_EQ(FitQualityOn(node, c.node_pools[node.pool], *choice->demand), fit->second.Quality());
      Reserve(state, fit->first, fit->second, r);
    }
  }
  EXPECT_GT(chosen, compared / 4);  // the states fill up, but many requests were placed
  EXPECT_LT(chosen, compared);      // ... and some found no room: both answers compared
}

INSTANTIATE_TEST_SUITE_P(Inventory, ChooseNodeProperty, ::testing::Values(3, 14));

}  // namespace
}  // namespace gpufed::placement
