#include "controller/placement/node_packer.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "controller/config/loader.h"
#include "controller/placement/inventory.h"
#include "controller/placement/plan.h"

namespace gpufed::placement {
namespace {

constexpr const char* kCluster = R"(
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: lab}
spec:
  provider: onprem
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: v100, count: 6, cpu: 64, memory: 256Gi, gpu: {model: V100, count: 8, memory: 32Gi, sharing: memory}}
  pricing: {currency: EUR, gpuHour: {V100: "1.00"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: t}
spec: {weight: 1}
)";

// A seeded mix of the shapes the openb traces hold: shares, one to eight whole GPUs,
// CPU-only pods, CPU and memory of several sizes. The engine's raw output is used (not
// std:: distributions, whose results differ between standard libraries).
std::string Mix(int count, uint32_t seed) {
  std::mt19937 rng(seed);
  const char* gpus[] = {"gpuShare: 250m, gpus: 1", "gpuShare: 500m, gpus: 1", "gpuShare: 125m, gpus: 1",
                        "gpus: 1",  "gpus: 1", "gpus: 2", "gpus: 4", "gpus: 8", ""};
  std::string yaml;
  for (int i = 0; i < count; ++i) {
    const std::string shape = gpus[rng() % 9];
    const int cpu = 1 + static_cast<int>(rng() % 24);
    const int memory = 4 * (1 + static_cast<int>(rng() % 24));
    std::string resources = "{" + shape + (shape.empty() ? "" : ", ") + "cpu: " + std::to_string(cpu) +
                            ", memory: " + std::to_string(memory) + "Gi}";
    char name[16];
    std::snprintf(name, sizeof name, "w%03d", i);
    yaml += "---\napiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: " + std::string(name) +
            "}\nspec: {tenant: t, resources: " + resources + "}\n";
  }
  return yaml;
}

// What gpufed-replay does with a pod: the packing policy on a packing::Fleet.
struct Replay {
  packing::Fleet fleet;
  std::unique_ptr<packing::PackingPolicy> policy;
};

Replay ReplayOf(const model::Cluster& cluster, const std::vector<packing::PodRequest>& pods) {
  std::vector<packing::NodeSpec> specs;
  const model::NodePool& pool = cluster.node_pools.front();
  for (int i = 0; i < pool.count; ++i) {
    specs.push_back({pool.name + "-" + std::to_string(i), pool.cpu.milli(), pool.memory.milli() / 1000 / (1 << 20),
                     pool.gpu.count, pool.gpu.model});
  }
  Result<packing::Fleet> fleet = packing::Fleet::Create(std::move(specs));
  EXPECT_TRUE(fleet.ok()) << fleet.status().ToString();
  auto policy = packing::MakePackingPolicy(kDefaultPackingPolicy, 0, packing::WorkloadDistribution::FromPods(pods));
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return {std::move(*fleet), std::move(*policy)};
}

// The product's node and GPU choice is the replayed policy's: a plan over a seeded mix
// binds every workload where gpufed-replay's policy, fed the same pods in the same order,
// puts it, and queues exactly the ones the policy finds no room for.
TEST(NodePacker, ProductBindingIsTheReplayedPolicysChoice) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    config::LoadResult loaded = config::LoadText(std::string(kCluster) + Mix(90, seed), "mix.yaml");
    ASSERT_TRUE(loaded.ok()) << loaded.diagnostics.items()[0].ToString();
    Snapshot snapshot;
    snapshot.config = &loaded.config;
    for (const model::Workload& w : loaded.config.workloads) snapshot.pending.push_back(&w);
    const Plan plan = MakePlan(snapshot);

    const model::Cluster& cluster = loaded.config.clusters.front();
    const model::NodePool& pool = cluster.node_pools.front();
    std::map<std::string, const model::Workload*> by_name;
    std::vector<packing::PodRequest> pods;
    for (const model::Workload& w : loaded.config.workloads) {
      by_name[w.metadata.name] = &w;
      pods.push_back(PodFor(w.resources, DemandOn(pool, w.resources)));
    }
    Replay replay = ReplayOf(cluster, pods);
    int placed = 0;
    int queued = 0;
    for (const Decision& d : plan.decisions) {
      SCOPED_TRACE(d.workload);
      const model::Workload& w = *by_name.at(d.workload);
      const packing::PodRequest pod = PodFor(w.resources, DemandOn(pool, w.resources));
      std::optional<packing::Allocation> alloc = replay.policy->Place(replay.fleet, pod);
      if (d.outcome != Outcome::kPlaced) {
        EXPECT_FALSE(alloc) << "the policy found room on " << replay.fleet.spec(alloc->node).name;
        ++queued;
        continue;
      }
      ++placed;
      ASSERT_TRUE(alloc) << "placed by the product, no room for the policy";
      ASSERT_EQ(d.binding.nodes.size(), 1u);
      EXPECT_EQ(d.binding.nodes[0], replay.fleet.spec(alloc->node).name);
      EXPECT_EQ(d.binding.gpus[0], alloc->gpus);
      ASSERT_TRUE(replay.fleet.Apply(pod, *alloc).ok());
    }
    // Both outcomes occur, so the comparison covers a full fleet too.
    EXPECT_GT(placed, 20);
    EXPECT_GT(queued, 5);
  }
}

// The policy decides, not the old best-fit quality: on two half-used nodes, a share goes
// where the replayed policy sends it, and a state copy (the placer's trial states) shares
// the packer without confusing its mirror.
TEST(NodePacker, TrialCopiesResyncTheMirror) {
  config::LoadResult loaded = config::LoadText(kCluster, "c.yaml");
  ASSERT_TRUE(loaded.ok());
  const model::Cluster& cluster = loaded.config.clusters.front();
  model::ResourceRequest share;
  share.gpus = 1;
  share.gpu_share = Quantity::FromMilli(250);
  share.cpu = Quantity::FromMilli(1000);
  auto mix = std::make_shared<PodMix>();
  mix->Add(share);
  Result<std::shared_ptr<NodePacker>> packer = NodePacker::Create(cluster, kDefaultPackingPolicy, mix);
  ASSERT_TRUE(packer.ok());
  ClusterState state = BuildClusterState(cluster);
  state.packer = *packer;
  const std::vector<bool> allowed(1, true);
  auto first = FindNode(state, share, allowed);
  ASSERT_TRUE(first);
  Reserve(state, first->first, first->second, share);
  ClusterState trial = state;
  for (GpuState& g : trial.nodes[static_cast<size_t>(first->first)].gpus) g.free_milli = 0;
  auto elsewhere = FindNode(trial, share, allowed);
  ASSERT_TRUE(elsewhere);
  EXPECT_NE(elsewhere->first, first->first);
  // Back on the real state: the second share stacks on the first one's GPU.
  auto stacked = FindNode(state, share, allowed);
  ASSERT_TRUE(stacked);
  EXPECT_EQ(stacked->first, first->first);
  EXPECT_EQ(stacked->second.gpus, first->second.gpus);
}

TEST(NodePacker, UnknownPolicyIsAnError) {
  config::LoadResult loaded = config::LoadText(kCluster, "c.yaml");
  ASSERT_TRUE(loaded.ok());
  Result<std::shared_ptr<NodePacker>> packer = NodePacker::Create(loaded.config.clusters.front(), "tetris", nullptr);
  ASSERT_FALSE(packer.ok());
  EXPECT_NE(packer.status().message().find("unknown packing policy 'tetris'"), std::string::npos);
}

}  // namespace
}  // namespace gpufed::placement
