#include "connectors/kubernetes/observe_mapping.h"

#include <gtest/gtest.h>

#include <limits>

namespace gpufed::connectors::kubernetes {
namespace {

model::Cluster KubeCluster() {
  model::Cluster c;
  c.metadata.name = "k";
  model::NodePool pool;
  pool.name = "a100-mig";
  pool.count = 1;
  pool.gpu.model = "A100-80GB";
  pool.gpu.count = 2;
  pool.gpu.sharing = model::GpuSharing::kMig;
  c.node_pools.push_back(pool);
  return c;
}

TEST(MapNode, CountsWholeGpusAndMigSlices) {
  nlohmann::json whole = nlohmann::json::parse(R"({"metadata":{"name":"n1"},
    "status":{"capacity":{"nvidia.com/gpu":"8"},"allocatable":{"nvidia.com/gpu":"8"},
              "conditions":[{"type":"Ready","status":"True"}]}})");
  MappedNode node = MapNode(whole, KubeCluster(), NodeUsage{});
  EXPECT_EQ(node.node.gpus.size(), 8u);
  EXPECT_TRUE(node.node.ready);
  nlohmann::json mig = nlohmann::json::parse(R"({"metadata":{"name":"n2","labels":{"nvidia.com/gpu.count":"2"}},
    "status":{"allocatable":{"nvidia.com/mig-1g.10gb":"7"}}})");
  EXPECT_EQ(MapNode(mig, KubeCluster(), NodeUsage{}).node.gpus.size(), 2u);
}

// fuzz_kube_response: a node claiming billions of GPUs had MapNode push one ObservedGpu
// per GPU until the input timed out; counts are clamped to the loader's 64 per node.
TEST(MapNode, AbsurdGpuCountsAreClamped) {
  nlohmann::json mig = nlohmann::json::parse(R"({"metadata":{"name":"n","labels":{"nvidia.com/gpu.count":"99999999999"}},
    "status":{"allocatable":{"nvidia.com/mig-1g.10gb":"7"}}})");
  EXPECT_EQ(MapNode(mig, KubeCluster(), NodeUsage{}).node.gpus.size(), 64u);
  nlohmann::json whole = nlohmann::json::parse(R"({"metadata":{"name":"n"},
    "status":{"capacity":{"nvidia.com/gpu":"1000000000000000"},"allocatable":{"nvidia.com/gpu":"1000000000000000"}}})");
  EXPECT_EQ(MapNode(whole, KubeCluster(), NodeUsage{}).node.gpus.size(), 64u);
  nlohmann::json negative = nlohmann::json::parse(R"({"metadata":{"name":"n","labels":{"nvidia.com/gpu.count":"-5"}},
    "status":{"allocatable":{"nvidia.com/mig-1g.10gb":"7"}}})");
  EXPECT_EQ(MapNode(negative, KubeCluster(), NodeUsage{}).node.gpus.size(), 0u);
}

// Integer quantities past what a milli value holds read as unparseable, not as an
// overflowed product (UBSan: signed integer overflow).
TEST(MapNode, HugeIntegerQuantitiesReadAsZero) {
  nlohmann::json node = nlohmann::json::parse(R"({"metadata":{"name":"n","labels":{"nvidia.com/gpu.memory":"9223372036854775807"}},
    "status":{"allocatable":{"cpu":9223372036854775807,"memory":-9223372036854775807,"nvidia.com/gpu":4}}})");
  MappedNode mapped = MapNode(node, KubeCluster(), NodeUsage{});
  EXPECT_EQ(mapped.node.free_cpu_milli, 0);
  EXPECT_EQ(mapped.node.free_memory, 0);
  ASSERT_EQ(mapped.node.gpus.size(), 4u);
  EXPECT_EQ(mapped.node.gpus[0].free_memory, 0);
}

// fuzz_kube_response: gpufed's annotations on a Job are editable by anyone with rights in
// the namespace; a resume point of 2^63-1 seconds overflowed Duration::FromSeconds (UBSan).
TEST(MapJob, OutOfRangeAnnotationsReadAsZero) {
  nlohmann::json job = nlohmann::json::parse(R"({"metadata":{"name":"j","annotations":{
    "gpufed.io/resume-from-seconds":"9223372036854775807","gpufed.io/checkpoint-interval-seconds":"-5",
    "gpufed.io/gpu-milli":"9223372036854775807"}},"status":{}})");
  ObservedWorkload w = MapJob(job, {}, TimeBase{Duration::FromSeconds(10), 0}, KubeCluster(), {});
  EXPECT_EQ(w.progress, Duration());
  EXPECT_EQ(w.gpu_seconds, 0);
  nlohmann::json sane = nlohmann::json::parse(R"({"metadata":{"name":"j","annotations":{
    "gpufed.io/resume-from-seconds":"120"}},"status":{}})");
  EXPECT_EQ(MapJob(sane, {}, TimeBase{Duration::FromSeconds(10), 0}, KubeCluster(), {}).progress,
            Duration::FromSeconds(120));
}

// fuzz_kube_response: pods near the largest quantity overflowed the per-node sums (UBSan);
// they saturate, and negative amounts count as none.
TEST(UsageByNode, SumsSaturate) {
  nlohmann::json pod = nlohmann::json::parse(R"({"spec":{"nodeName":"n","containers":[
    {"resources":{"requests":{"cpu":9223372036854775,"memory":-5},"limits":{"nvidia.com/gpu":9223372036854775}}},
    {"resources":{"requests":{"cpu":9223372036854775},"limits":{"nvidia.com/gpu":9223372036854775}}}]}})");
  std::map<std::string, NodeUsage> usage = UsageByNode({pod, pod});
  ASSERT_EQ(usage.count("n"), 1u);
  EXPECT_EQ(usage["n"].cpu_milli, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(usage["n"].memory, 0);
  EXPECT_EQ(usage["n"].extended["nvidia.com/gpu"], 4 * int64_t{9223372036854775});
  nlohmann::json node = nlohmann::json::parse(R"({"metadata":{"name":"n"},
    "status":{"allocatable":{"cpu":"8","nvidia.com/gpu":"4"}}})");
  MappedNode mapped = MapNode(node, KubeCluster(), usage["n"]);
  EXPECT_EQ(mapped.node.free_cpu_milli, 0);
  ASSERT_EQ(mapped.node.gpus.size(), 4u);
  EXPECT_EQ(mapped.node.gpus[0].free_milli, 0);
}

}  // namespace
}  // namespace gpufed::connectors::kubernetes
