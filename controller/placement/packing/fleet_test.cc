#include "controller/placement/packing/fleet.h"

#include <gtest/gtest.h>

namespace gpufed::packing {
namespace {

Fleet TwoNodes() {
  auto f = Fleet::Create({{"a", 8000, 16384, 2, "T4"}, {"b", 32000, 65536, 4, "V100"}});
  EXPECT_TRUE(f.ok());
  return std::move(f).value();
}

PodRequest Pod(int64_t cpu, int num_gpu, int milli, std::vector<std::string> models = {}) {
  PodRequest p;
  p.name = "p";
  p.cpu_milli = cpu;
  p.memory_mib = 1024;
  p.num_gpu = num_gpu;
  p.gpu_milli = milli;
  p.allowed_models = std::move(models);
  return p;
}

TEST(Fleet, SharedPodNeedsOneGpuWithEnoughMilli) {
  Fleet f = TwoNodes();
  const PodRequest big = Pod(1000, 1, 700);
  ASSERT_TRUE(f.Apply(big, {0, {0}, 700}).ok());
  ASSERT_TRUE(f.Apply(big, {0, {1}, 700}).ok());
  // 300 left on each GPU: 600 total, but no single GPU has 400.
  EXPECT_FALSE(f.Fits(0, Pod(1000, 1, 400), ~0ULL));
  EXPECT_TRUE(f.Fits(0, Pod(1000, 1, 300), ~0ULL));
  EXPECT_FALSE(f.Apply(Pod(1000, 1, 400), {0, {0}, 400}).ok());
}

TEST(Fleet, WholeGpuPodsNeedFullyFreeGpusOnOneNode) {
  Fleet f = TwoNodes();
  ASSERT_TRUE(f.Apply(Pod(1000, 1, 100), {0, {0}, 100}).ok());
  EXPECT_FALSE(f.Fits(0, Pod(1000, 2, 1000), ~0ULL));  // GPU 0 is partly used
  EXPECT_TRUE(f.Fits(0, Pod(1000, 1, 1000), ~0ULL));
  EXPECT_FALSE(f.Apply(Pod(1000, 1, 1000), {0, {0}, 1000}).ok());  // not a free GPU
  EXPECT_TRUE(f.Fits(1, Pod(1000, 4, 1000), ~0ULL));
  EXPECT_FALSE(f.Fits(1, Pod(1000, 5, 1000), ~0ULL));
  EXPECT_EQ(f.LowestFreeGpus(0, 1), std::vector<int>{1});
}

TEST(Fleet, CpuMemoryAndModelMustFit) {
  Fleet f = TwoNodes();
  EXPECT_FALSE(f.Fits(0, Pod(9000, 0, 0), ~0ULL));
  PodRequest mem = Pod(1000, 0, 0);
  mem.memory_mib = 20000;
  EXPECT_FALSE(f.Fits(0, mem, ~0ULL));
  EXPECT_TRUE(f.Fits(1, mem, ~0ULL));
  const PodRequest v100 = Pod(1000, 1, 500, {"V100"});
  const uint64_t mask = f.ModelMask(v100.allowed_models);
  EXPECT_FALSE(f.Fits(0, v100, mask));
  EXPECT_TRUE(f.Fits(1, v100, mask));
  EXPECT_FALSE(f.Apply(v100, {0, {0}, 500}).ok());
  EXPECT_EQ(f.ModelMask({"A100"}), 0u);  // unknown model: fits nowhere
}

TEST(Fleet, ApplyAndReleaseKeepTotals) {
  Fleet f = TwoNodes();
  const PodRequest p = Pod(2000, 2, 1000);
  const Allocation a{1, {1, 3}, 1000};
  ASSERT_TRUE(f.Apply(p, a).ok());
  EXPECT_EQ(f.gpu_allocated_milli(), 2000);
  EXPECT_EQ(f.state(1).cpu_left, 30000);
  EXPECT_EQ(f.state(1).affinity.at(2), 1);
  ASSERT_TRUE(f.Release(p, a).ok());
  EXPECT_EQ(f.gpu_allocated_milli(), 0);
  EXPECT_TRUE(f.state(1).affinity.empty());
  EXPECT_FALSE(f.Release(p, a).ok());  // nothing left to release
}

TEST(Fleet, RejectsMalformedAllocations) {
  Fleet f = TwoNodes();
  EXPECT_FALSE(f.Apply(Pod(0, 2, 1000), {1, {0, 0}, 1000}).ok());  // duplicate GPU
  EXPECT_FALSE(f.Apply(Pod(0, 2, 1000), {1, {0}, 1000}).ok());     // wrong count
  EXPECT_FALSE(f.Apply(Pod(0, 1, 1000), {7, {0}, 1000}).ok());     // bad node
  EXPECT_FALSE(f.Apply(Pod(0, 1, 1000), {1, {9}, 1000}).ok());     // bad GPU
  EXPECT_FALSE(ValidatePodRequest(Pod(0, 2, 500)).ok());           // share over 2 GPUs
  EXPECT_FALSE(Fleet::Create({{"x", 1, 1, 2, ""}}).ok());           // GPUs without model
}

}  // namespace
}  // namespace gpufed::packing
