// Property tests over random fleets and workloads (fixed seeds): whatever the mix, a
// plan never over-commits a GPU, a share or a MIG slice, never splits a gang and never
// violates a deny rule.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "controller/placement/inventory.h"
#include "controller/placement/mig.h"
#include "controller/placement/plan.h"
#include "tests/testutil/fleet_builder.h"

namespace gpufed::placement {
namespace {

struct RandomCase {
  model::Config config;
  std::vector<model::Workload> workloads;
};

RandomCase MakeRandomCase(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  RandomCase rc;
  const char* providers[] = {"onprem", "aws", "ionos"};
  const char* zones[] = {"eu", "us"};
  int clusters = pick(1, 4);
  for (int c = 0; c < clusters; ++c) {
    model::Cluster cluster = testutil::MakeCluster("c" + std::to_string(c), providers[pick(0, 2)], zones[pick(0, 1)],
                                                   pick(1, 3), pick(1, 8));
    model::NodePool& pool = cluster.node_pools[0];
    pool.gpu.nvlink = pick(0, 1) == 1;
    testutil::ShareGpus(cluster, static_cast<testutil::Sharing>(pick(0, 2)));
    if (pick(0, 1)) cluster.elasticity.max_nodes = pool.count + pick(0, 2);
    rc.config.clusters.push_back(cluster);
  }
  rc.config.tenants = {testutil::MakeTenant("t0"), testutil::MakeTenant("t1", 2)};
  model::Policy policy;
  policy.metadata.name = "deny";
  model::Rule rule;
  rule.name = "restricted-onprem";
  model::Condition when{"data.sensitivity", {"data", "sensitivity"}, false, model::MatchOp::kEquals, "restricted", {}};
  model::Condition require{"cluster.provider", {"provider"}, false, model::MatchOp::kEquals, "onprem", {}};
  rule.when = {when};
  rule.require = {require};
  policy.rules = {rule};
  rc.config.policies = {policy};
  int count = pick(5, 60);
  for (int i = 0; i < count; ++i) {
    model::Workload w = testutil::MakeWorkload("w" + std::to_string(i), pick(0, 1) ? "t1" : "t0", pick(1, 8));
    int shape = pick(0, 5);
    if (shape == 0) {
      w.resources.gpus = 1;
      w.resources.gpu_memory = Quantity::FromUnits(int64_t{pick(2, 20)} << 30);
    } else if (shape == 1) {
      w.resources.gpus = 1;
      w.resources.gpu_share = Quantity::FromMilli(pick(100, 900));
    } else if (shape == 2) {
      w.resources.nodes = pick(2, 3);
      w.resources.gpus_per_node = pick(1, 4);
      w.resources.gpus = 0;
    } else if (shape == 3) {
      w.resources.topology = model::Topology::kSameNode;
    }
    if (pick(0, 4) == 0) w.data.sensitivity = model::Sensitivity::kRestricted;
    w.priority = pick(0, 2) * 500;
    w.submitted_at = Duration::FromSeconds(pick(0, 100));
    rc.workloads.push_back(w);
  }
  return rc;
}

struct Usage {
  std::map<int, int> milli;   // by GPU index
  std::map<int, int> slices;  // MIG compute slices by GPU index
};

TEST(PlacerProperty, NeverOverCommitsSplitsGangsOrBreaksDenyRules) {
  int placed_total = 0, gangs = 0, spreads = 0, fractions = 0, mig_instances = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RandomCase rc = MakeRandomCase(seed);
    Snapshot snapshot;
    snapshot.config = &rc.config;
    for (const model::Workload& w : rc.workloads) snapshot.pending.push_back(&w);
    Plan plan = MakePlan(snapshot);
    ASSERT_EQ(plan.decisions.size(), rc.workloads.size());
    std::map<std::string, const model::Workload*> by_name;
    for (const model::Workload& w : rc.workloads) by_name[w.metadata.name] = &w;
    std::map<std::string, std::map<std::string, Usage>> usage;  // cluster -> node -> usage
    std::map<std::string, uint8_t> mig_slices;                   // cluster/node/gpu -> memory slices taken
    for (const Decision& d : plan.decisions) {
      if (d.outcome != Outcome::kPlaced) continue;
      ++placed_total;
      const model::Workload& w = *by_name.at(d.workload);
      const model::Cluster* cluster = rc.config.FindCluster(d.binding.cluster);
      ASSERT_NE(cluster, nullptr);
      if (w.data.sensitivity == model::Sensitivity::kRestricted) {
        EXPECT_EQ(cluster->provider, "onprem") << "deny rule violated by " << d.workload;
      }
      // Gangs: exactly `nodes` distinct nodes of one cluster; topology any may spread its
      // GPUs over distinct nodes (all of them, in all); others on one node.
      std::set<std::string> distinct(d.binding.nodes.begin(), d.binding.nodes.end());
      EXPECT_EQ(distinct.size(), d.binding.nodes.size());
      const bool spread = Spreads(w.resources) && d.binding.nodes.size() > 1;
      if (!spread) {
        EXPECT_EQ(static_cast<int>(d.binding.nodes.size()), std::max(1, w.resources.nodes));
      }
      gangs += w.resources.nodes > 1;
      spreads += spread;
      if (spread) {
        size_t total = 0;
        for (const std::vector<int>& gpus : d.binding.gpus) total += gpus.size();
        EXPECT_EQ(static_cast<int>(total), w.resources.gpus);
      }
      fractions += d.binding.gpu_milli_each < kMilliPerGpu;
      int per_node = w.resources.nodes > 1 ? w.resources.gpus_per_node : w.resources.gpus;
      const model::NodePool& pool = cluster->node_pools[0];
      if (w.resources.topology == model::Topology::kSameNode && per_node > 1) {
        EXPECT_TRUE(pool.gpu.nvlink);
      }
      ASSERT_EQ(d.binding.gpus.size(), d.binding.nodes.size());
      for (size_t m = 0; m < d.binding.nodes.size(); ++m) {
        if (!spread) {
          EXPECT_EQ(static_cast<int>(d.binding.gpus[m].size()), per_node);
        }
        Usage& u = usage[d.binding.cluster][d.binding.nodes[m]];
        for (int g : d.binding.gpus[m]) {
          EXPECT_GE(g, 0);
          EXPECT_LT(g, pool.gpu.count);
          bool whole = d.binding.gpu_milli_each == kMilliPerGpu && d.binding.mig_profile.empty();
          if (whole) {
            EXPECT_EQ(u.milli[g], 0) << "a whole GPU was given to a GPU already in use";
          }
          u.milli[g] += d.binding.gpu_milli_each;
          if (!d.binding.mig_profile.empty()) {
            u.slices[g] += model::ParseMigProfile(d.binding.mig_profile)->compute_slices;
            // Valid per NVIDIA's table: an allowed start, no overlap with other instances.
            const MigProfile* geometry = FindMigProfile(pool.gpu.model, d.binding.mig_profile);
            ASSERT_NE(geometry, nullptr) << d.binding.mig_profile;
            ASSERT_NE(std::find(geometry->starts.begin(), geometry->starts.end(), d.binding.mig_start),
                      geometry->starts.end());
            uint8_t mask = static_cast<uint8_t>(((1u << geometry->memory_slices) - 1u) << d.binding.mig_start);
            uint8_t& taken = mig_slices[d.binding.cluster + "/" + d.binding.nodes[m] + "/" + std::to_string(g)];
            EXPECT_EQ(taken & mask, 0) << "overlapping MIG instances";
            taken |= mask;
            ++mig_instances;
          }
        }
      }
    }
    for (const auto& [cluster, nodes] : usage) {
      const model::Cluster* c = rc.config.FindCluster(cluster);
      int max_nodes = std::max(c->node_pools[0].count, c->elasticity.max_nodes);
      EXPECT_LE(static_cast<int>(nodes.size()), max_nodes);
      for (const auto& [node, u] : nodes) {
        for (const auto& [g, milli] : u.milli) EXPECT_LE(milli, kMilliPerGpu) << cluster << "/" << node << " gpu " << g;
        for (const auto& [g, slices] : u.slices) EXPECT_LE(slices, kMigComputeSlices);
      }
    }
  }
  // The properties were exercised, not vacuous.
  EXPECT_GT(placed_total, 1000);
  EXPECT_GT(gangs, 50);
  EXPECT_GT(spreads, 20);
  EXPECT_GT(fractions, 100);
  EXPECT_GT(mig_instances, 100);
}

}  // namespace
}  // namespace gpufed::placement
