// The pieces gpufed adds to FGD: the resources measure (CPU and memory first-class),
// the GPU-demand cover of the typical pods, and the policy's use of both.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "controller/placement/packing/policy.h"
#include "controller/placement/packing/workload.h"

namespace gpufed::packing {
namespace {

PodRequest Pod(int64_t cpu, int num_gpu, int milli, int64_t memory = 0) {
  PodRequest p;
  p.name = "p";
  p.cpu_milli = cpu;
  p.memory_mib = memory;
  p.num_gpu = num_gpu;
  p.gpu_milli = milli;
  return p;
}

Fleet OneNode(int64_t cpu, int64_t memory, int gpus) {
  auto f = Fleet::Create({{"n", cpu, memory, gpus, "G2"}});
  EXPECT_TRUE(f.ok());
  return std::move(f).value();
}

// One typical pod: a whole GPU with 12 CPUs and 48 GiB.
WorkloadDistribution WholeGpuWorkload() {
  TypicalPod t{12000, 1000, 1, {}, 1.0, 49152};
  return WorkloadDistribution({t});
}

// A share's moves are measured from one view of the node (NodeFragAfter and
// NodeFragResourcesAfter): on random distributions, nodes and one-GPU changes, both give
// exactly what the measures give of the changed node.
TEST(FragmentationModel, MovesFromAViewEqualTheMeasuresOfTheChangedNode) {
  std::mt19937 rng(11);
  const Fleet f = OneNode(64000, 262144, 8);
  int compared = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<TypicalPod> pods;
    const int shapes = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < shapes; ++i) {
      const int milli = rng() % 3 == 0 ? 1000 : 50 * (1 + static_cast<int>(rng() % 20));
      const int gpus = milli == 1000 ? 1 + static_cast<int>(rng() % 4) : 1;
      const int64_t cpu = rng() % 3 == 0 ? 0 : 1000 * static_cast<int64_t>(1 + rng() % 16);
      const int64_t memory = rng() % 3 == 0 ? 0 : 1024 * static_cast<int64_t>(1 + rng() % 64);
      pods.push_back(TypicalPod{cpu, milli, gpus, {}, 1.0 / shapes, memory});
    }
    if (rng() % 4 == 0) pods.push_back(TypicalPod{2000, 0, 0, {}, 0.1, 0});  // CPU-only
    const FragmentationModel m(WorkloadDistribution(pods), f);
    std::vector<int> gpus(8);
    for (int& left : gpus) left = rng() % 4 == 0 ? 1000 : static_cast<int>(rng() % 1001);
    const int64_t cpu = static_cast<int64_t>(rng() % 64001);
    const int64_t memory = static_cast<int64_t>(rng() % 262145);
    FragmentationModel::NodeView view;
    m.View(gpus, view);
    for (size_t g = 0; g < gpus.size(); ++g) {
      const int from = gpus[g];
      const int to = static_cast<int>(rng() % (from + 1));
      std::vector<int> changed = gpus;
      changed[g] = to;
      ASSERT_EQ(m.NodeFragAfter(0, cpu, view, from, to), m.NodeFrag(0, cpu, changed)) << "round " << round;
      ASSERT_EQ(m.NodeFragResourcesAfter(0, cpu, memory, view, from, to), m.NodeFragResources(0, cpu, memory, changed))
          << "round " << round;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 1600);
}

TEST(FragmentationResources, EqualsFgdWhenCpuAndMemoryArePlentiful) {
  const Fleet f = OneNode(96000, 393216, 8);
  const WorkloadDistribution w({TypicalPod{4000, 500, 1, {}, 0.5, 1024}, TypicalPod{8000, 1000, 2, {}, 0.5, 2048}});
  const FragmentationModel m(w, f);
  const std::vector<std::vector<int>> states = {
      {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, {300, 1000, 1000, 0, 0, 0, 0, 0}, {300, 400, 0, 0, 0, 0, 0, 0}};
  for (const auto& gpus : states) {
    EXPECT_DOUBLE_EQ(m.NodeFragResources(0, 96000, 393216, gpus), m.NodeFrag(0, 96000, gpus));
  }
}

TEST(FragmentationResources, CountsGpusStrandedByCpuInWholeCopies) {
  const Fleet f = OneNode(96000, 393216, 8);
  const FragmentationModel m(WholeGpuWorkload(), f);
  const std::vector<int> four_free = {1000, 1000, 1000, 1000, 0, 0, 0, 0};
  // 30 CPUs back two 12-CPU copies: two of the four free GPUs are stranded. FGD
  // sees the pod fit and counts nothing.
  EXPECT_DOUBLE_EQ(m.NodeFragResources(0, 30000, 393216, four_free), 2000);
  EXPECT_DOUBLE_EQ(m.NodeFrag(0, 30000, four_free), 0);
  // Below one copy both measures count every GPU milli left (FGD's yes/no case).
  EXPECT_DOUBLE_EQ(m.NodeFragResources(0, 11000, 393216, four_free), 4000);
  EXPECT_DOUBLE_EQ(m.NodeFrag(0, 11000, four_free), 4000);
}

TEST(FragmentationResources, CountsGpusStrandedByMemory) {
  const Fleet f = OneNode(96000, 393216, 8);
  const FragmentationModel m(WholeGpuWorkload(), f);
  const std::vector<int> four_free = {1000, 1000, 1000, 1000, 0, 0, 0, 0};
  // 100 GiB hold two 48 GiB copies; FGD ignores memory.
  EXPECT_DOUBLE_EQ(m.NodeFragResources(0, 96000, 102400, four_free), 2000);
  EXPECT_DOUBLE_EQ(m.NodeFrag(0, 96000, four_free), 0);
}

TEST(WorkloadDistribution, GpuDemandCoverAddsRareWideShapes) {
  std::vector<PodRequest> pods;
  for (int i = 0; i < 97; ++i) pods.push_back(Pod(4000, 1, 500, 1000));
  for (int i = 0; i < 3; ++i) pods.push_back(Pod(64000, 8, 1000, 3000));
  const WorkloadDistribution w = WorkloadDistribution::FromPods(pods, 0.95);
  // By count the 8-GPU shape is 3 % of the pods and falls out of FGD's set...
  ASSERT_EQ(w.pods().size(), 1u);
  EXPECT_EQ(w.pods()[0].memory_mib, 1000);
  // ... but it asks for 24 of the 72.5 GPUs, so the GPU-demand cover keeps it.
  const WorkloadDistribution wide = w.CoveringGpuDemand();
  ASSERT_EQ(wide.pods().size(), 2u);
  EXPECT_EQ(wide.pods()[1].num_gpu, 8);
  EXPECT_NEAR(wide.pods()[0].weight, 0.97, 1e-12);  // still pod frequencies
  EXPECT_NEAR(wide.pods()[1].weight, 0.03, 1e-12);
  EXPECT_EQ(wide.pods()[1].memory_mib, 3000);
}

TEST(GpufedPolicy, CpuOnlyPodTakesCpuNoGpuPodNeeds) {
  // Two nodes, two free GPUs each. On `tight` the GPUs' typical pods need 24 of the
  // 28 CPUs; `roomy` has CPU to spare. An 8-CPU pod without GPUs fits on both. FGD
  // sees one typical pod still fit on `tight` (nothing fragmented) and takes the
  // first node; gpufed sees one GPU on `tight` stranded and goes to `roomy`.
  auto f = Fleet::Create({{"tight", 28000, 1 << 20, 2, "G2"}, {"roomy", 64000, 1 << 20, 2, "G2"}});
  ASSERT_TRUE(f.ok());
  const WorkloadDistribution w = WholeGpuWorkload();
  const PodRequest cpu_only = Pod(8000, 0, 0, 1024);
  auto fgd = MakePackingPolicy("fgd", 1, w);
  auto gpufed = MakePackingPolicy("gpufed", 1, w);
  ASSERT_TRUE(fgd.ok() && gpufed.ok());
  const auto by_fgd = (*fgd)->Place(*f, cpu_only);
  const auto by_gpufed = (*gpufed)->Place(*f, cpu_only);
  ASSERT_TRUE(by_fgd && by_gpufed);
  EXPECT_EQ(by_fgd->node, 0u);
  EXPECT_EQ(by_gpufed->node, 1u);
}

TEST(GpufedPolicy, SamePodSameChoiceWhateverCameBefore) {
  // Pure function of (fleet state, pod): a fresh policy object and one that has
  // placed other pods on another fleet choose alike.
  auto specs = std::vector<NodeSpec>{{"a", 32000, 1 << 18, 4, "G2"}, {"b", 96000, 1 << 19, 8, "G2"}};
  const WorkloadDistribution w = WholeGpuWorkload();
  auto used = MakePackingPolicy("gpufed", 3, w);
  ASSERT_TRUE(used.ok());
  auto other = Fleet::Create(specs);
  ASSERT_TRUE(other.ok());
  for (int i = 0; i < 5; ++i) {
    auto a = (*used)->Place(*other, Pod(12000, 1, 1000, 1024));
    ASSERT_TRUE(a);
    ASSERT_TRUE(other->Apply(Pod(12000, 1, 1000, 1024), *a).ok());
  }
  auto fleet = Fleet::Create(specs);
  ASSERT_TRUE(fleet.ok());
  ASSERT_TRUE(fleet->Apply(Pod(20000, 1, 400, 1024), {0, {0}, 400}).ok());
  auto fresh = MakePackingPolicy("gpufed", 3, w);
  ASSERT_TRUE(fresh.ok());
  const auto x = (*fresh)->Place(*fleet, Pod(4000, 1, 300, 512));
  const auto y = (*used)->Place(*fleet, Pod(4000, 1, 300, 512));
  ASSERT_TRUE(x && y);
  EXPECT_EQ(x->node, y->node);
  EXPECT_EQ(x->gpus, y->gpus);
}

}  // namespace
}  // namespace gpufed::packing
