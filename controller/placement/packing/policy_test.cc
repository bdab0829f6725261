#include "controller/placement/packing/policy.h"

#include <gtest/gtest.h>

#include <random>

namespace gpufed::packing {
namespace {

PodRequest Pod(int64_t cpu, int num_gpu, int milli, std::vector<std::string> models = {}) {
  PodRequest p;
  p.name = "p";
  p.cpu_milli = cpu;
  p.memory_mib = 0;
  p.num_gpu = num_gpu;
  p.gpu_milli = milli;
  p.allowed_models = std::move(models);
  return p;
}

std::unique_ptr<PackingPolicy> Make(const std::string& name, const WorkloadDistribution& w = {}) {
  auto p = MakePackingPolicy(name, 7, w);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return std::move(p).value();
}

// Node 0 is idle, node 1 has one GPU half used, node 2 is idle but has a single GPU.
Fleet SmallFleet() {
  auto f = Fleet::Create({{"idle2", 64000, 1 << 20, 2, "T4"},
                          {"half", 64000, 1 << 20, 2, "T4"},
                          {"idle1", 64000, 1 << 20, 1, "T4"}});
  EXPECT_TRUE(f.ok());
  Fleet fleet = std::move(f).value();
  EXPECT_TRUE(fleet.Apply(Pod(1000, 1, 500), {1, {0}, 500}).ok());
  return fleet;
}

TEST(PackingPolicy, UnknownNameIsInvalidArgument) {
  auto p = MakePackingPolicy("worstfit", 1, {});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
}

TEST(PackingPolicy, FirstFitTakesFirstFeasibleNode) {
  Fleet f = SmallFleet();
  auto a = Make("firstfit")->Place(f, Pod(1000, 2, 1000));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->node, 0u);  // node 1 has only one free GPU
  EXPECT_EQ(a->gpus, (std::vector<int>{0, 1}));
}

TEST(PackingPolicy, PackingPrefersSharedGpus) {
  Fleet f = SmallFleet();
  auto a = Make("packing")->Place(f, Pod(1000, 1, 300));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->node, 1u);
  EXPECT_EQ(a->gpus, std::vector<int>{0});  // the GPU already shared
}

TEST(PackingPolicy, BestFitPicksFullestNode) {
  Fleet f = SmallFleet();
  auto a = Make("bestfit")->Place(f, Pod(1000, 1, 1000));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->node, 2u);  // the single-GPU node is left with nothing: the tightest fit
  auto b = Make("bestfit")->Place(f, Pod(1000, 1, 500));
  ASSERT_TRUE(b);
  // The reference scores node totals, not GPUs: 500 left on idle1 beats 1000 on half.
  EXPECT_EQ(b->node, 2u);
}

TEST(PackingPolicy, ClusteringPrefersNodesWithSameKind) {
  Fleet f = SmallFleet();
  auto a = Make("clustering")->Place(f, Pod(1000, 1, 200));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->node, 1u);
}

TEST(PackingPolicy, FragmentationPoliciesAvoidBreakingWholeGpus) {
  // Workload of whole-GPU pods only: a share on the half-used GPU fragments nothing
  // new, a share on an idle GPU makes that GPU useless for the typical pod.
  WorkloadDistribution w({TypicalPod{1000, 1000, 1, {}, 1.0}});
  for (const char* name : {"fgd", "gpufed"}) {
    Fleet f = SmallFleet();
    auto a = Make(name, w)->Place(f, Pod(1000, 1, 400));
    ASSERT_TRUE(a) << name;
    EXPECT_EQ(a->node, 1u) << name;
    EXPECT_EQ(a->gpus, std::vector<int>{0}) << name;
  }
}

TEST(PackingPolicy, ModelConstraintIsHonoured) {
  auto f = Fleet::Create({{"t4", 64000, 1 << 20, 2, "T4"}, {"v100", 64000, 1 << 20, 2, "V100"}});
  ASSERT_TRUE(f.ok());
  for (const auto& name : PackingPolicyNames()) {
    auto a = Make(name)->Place(*f, Pod(1000, 1, 1000, {"V100"}));
    ASSERT_TRUE(a) << name;
    EXPECT_EQ(a->node, 1u) << name;
    EXPECT_FALSE(Make(name)->Place(*f, Pod(1000, 1, 1000, {"A100"}))) << name;
  }
}

// Random fleets and pods: whatever a policy returns must apply cleanly, and the
// fleet's invariants must hold throughout.
TEST(PackingPolicy, NeverOvercommitsOnRandomFleets) {
  std::mt19937_64 gen(20240601);
  const std::vector<std::string> models = {"A", "B", "C"};
  for (int round = 0; round < 6; ++round) {
    std::vector<NodeSpec> specs;
    for (int n = 0; n < 40; ++n) {
      specs.push_back({"n" + std::to_string(n), static_cast<int64_t>(gen() % 64 + 1) * 1000,
                       static_cast<int64_t>(gen() % 256 + 1) * 1024, static_cast<int>(gen() % 8 + 1),
                       models[gen() % models.size()]});
    }
    std::vector<PodRequest> pods;
    for (int i = 0; i < 400; ++i) {
      PodRequest p = Pod(static_cast<int64_t>(gen() % 16) * 500, 0, 0);
      p.memory_mib = static_cast<int64_t>(gen() % 32) * 1024;
      const int kind = static_cast<int>(gen() % 4);
      if (kind == 1) {
        p.num_gpu = 1;
        p.gpu_milli = static_cast<int>(gen() % 999 + 1);
      } else if (kind >= 2) {
        p.num_gpu = static_cast<int>(gen() % 4 + 1);
        p.gpu_milli = 1000;
      }
      if (gen() % 5 == 0) p.allowed_models = {models[gen() % models.size()]};
      pods.push_back(p);
    }
    const WorkloadDistribution w = WorkloadDistribution::FromPods(pods);
    for (const auto& name : PackingPolicyNames()) {
      auto fleet = Fleet::Create(specs);
      ASSERT_TRUE(fleet.ok());
      auto policy = Make(name, w);
      for (const PodRequest& p : pods) {
        auto a = policy->Place(*fleet, p);
        if (!a) continue;
        ASSERT_TRUE(fleet->Apply(p, *a).ok()) << name;
        if (p.NeedsGpu() && !p.IsShared()) {
          ASSERT_EQ(a->gpus.size(), static_cast<size_t>(p.num_gpu));
        }
      }
      int64_t allocated = 0;
      for (size_t n = 0; n < fleet->size(); ++n) {
        const NodeState& s = fleet->state(n);
        ASSERT_GE(s.cpu_left, 0) << name;
        ASSERT_GE(s.memory_left, 0) << name;
        for (int left : s.gpu_left) {
          ASSERT_GE(left, 0) << name;
          ASSERT_LE(left, 1000) << name;
          allocated += 1000 - left;
        }
      }
      EXPECT_EQ(allocated, fleet->gpu_allocated_milli()) << name;
    }
  }
}

TEST(PackingPolicy, SameSeedSameChoices) {
  std::vector<NodeSpec> specs;
  for (int n = 0; n < 30; ++n) specs.push_back({"n" + std::to_string(n), 32000, 1 << 18, 4, "T4"});
  std::vector<PodRequest> pods;
  for (int i = 0; i < 200; ++i) pods.push_back(Pod(1000, 1, 100 + (i * 37) % 900));
  const WorkloadDistribution w = WorkloadDistribution::FromPods(pods);
  for (const auto& name : PackingPolicyNames()) {
    std::vector<size_t> first, second;
    for (auto* out : {&first, &second}) {
      auto fleet = Fleet::Create(specs);
      auto policy = Make(name, w);
      for (const PodRequest& p : pods) {
        auto a = policy->Place(*fleet, p);
        if (!a) {
          out->push_back(SIZE_MAX);
          continue;
        }
        ASSERT_TRUE(fleet->Apply(p, *a).ok());
        out->push_back(a->node * 100 + static_cast<size_t>(a->gpus[0]));
      }
    }
    EXPECT_EQ(first, second) << name;
  }
}

TEST(WorkloadDistribution, KeepsMostFrequentShapesUpToCoverage) {
  std::vector<PodRequest> pods;
  for (int i = 0; i < 90; ++i) pods.push_back(Pod(1000, 1, 1000));
  for (int i = 0; i < 8; ++i) pods.push_back(Pod(2000, 1, 500));
  for (int i = 0; i < 2; ++i) pods.push_back(Pod(3000, 0, 0));
  const WorkloadDistribution w = WorkloadDistribution::FromPods(pods, 0.95);
  ASSERT_EQ(w.pods().size(), 2u);
  EXPECT_NEAR(w.pods()[0].weight, 90.0 / 98.0, 1e-9);
  EXPECT_EQ(w.pods()[1].gpu_milli, 500);
}

}  // namespace
}  // namespace gpufed::packing
