#include "controller/placement/search.h"

#include <gtest/gtest.h>

#include "tests/testutil/fleet_builder.h"

namespace gpufed::placement {
namespace {

// 3 nodes x 8 GPUs; `used[n]` GPUs of node n taken.
ClusterState StateWith(const model::Cluster& cluster, std::vector<int> used) {
  ClusterState state = BuildClusterState(cluster);
  for (size_t n = 0; n < used.size(); ++n) {
    for (int g = 0; g < used[n]; ++g) state.nodes[n].gpus[g].free_milli = 0;
  }
  return state;
}

TEST(Search, SpreadsOverTheFewestNodesAndGivesTheRestToTheTightest) {
  model::Cluster cluster = testutil::MakeCluster("c", "onprem", "eu", 3, 8);
  ClusterState state = StateWith(cluster, {2, 6, 0});  // free: 6, 2, 8
  model::ResourceRequest r;
  r.gpus = 10;
  const std::vector<bool> allowed(1, true);
  std::optional<Placement> p = FindPlacement(state, r, allowed);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->nodes.size(), 2u);
  EXPECT_EQ(p->nodes[0].first, 2);  // the empty node first: 8
  EXPECT_EQ(p->nodes[0].second.gpus.size(), 8u);
  EXPECT_EQ(p->nodes[1].first, 1);  // the rest (2) on the node with exactly 2 free
  EXPECT_EQ(p->nodes[1].second.gpus.size(), 2u);
  EXPECT_FALSE(p->provisions);
}

TEST(Search, SameNodeNeverSpreads) {
  model::Cluster cluster = testutil::MakeCluster("c", "onprem", "eu", 3, 8);
  model::ResourceRequest r;
  r.gpus = 10;
  r.topology = model::Topology::kSameNode;
  EXPECT_FALSE(FindPlacement(BuildClusterState(cluster), r, std::vector<bool>(1, true)));
}

TEST(Search, OnlyNodeLooksAtThatNode) {
  model::Cluster cluster = testutil::MakeCluster("c", "onprem", "eu", 3, 8);
  ClusterState state = BuildClusterState(cluster);
  model::ResourceRequest r;
  r.gpus = 4;
  std::optional<Placement> p = FindPlacement(state, r, std::vector<bool>(1, true), 2);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->nodes.front().first, 2);
  std::vector<int> used = ApplyPlacement(state, *p, r);
  EXPECT_EQ(used, std::vector<int>{2});
  EXPECT_EQ(state.nodes[2].FreeWholeGpus(), 4);
  r.gpus = 5;
  EXPECT_FALSE(FindPlacement(state, r, std::vector<bool>(1, true), 2));
}

TEST(Search, ElasticNodesMakeUpWhatThePresentOnesLack) {
  model::Cluster cluster = testutil::MakeCluster("c", "aws", "eu", 1, 8);
  cluster.elasticity.max_nodes = 3;
  ClusterState state = BuildClusterState(cluster);
  model::ResourceRequest r;
  r.gpus = 20;
  std::optional<Placement> p = FindPlacement(state, r, std::vector<bool>(1, true));
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->provisions);
  ASSERT_EQ(p->nodes.size(), 3u);
  std::vector<int> used = ApplyPlacement(state, *p, r);
  EXPECT_EQ(state.nodes.size(), 3u);
  int free = 0;
  for (const NodeState& n : state.nodes) free += n.FreeWholeGpus();
  EXPECT_EQ(free, 4);
}

}  // namespace
}  // namespace gpufed::placement
