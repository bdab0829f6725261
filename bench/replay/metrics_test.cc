#include "bench/replay/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>

#include "bench/replay/openb_experiment.h"
#include "bench/replay/openb_trace.h"

namespace gpufed::replay {
namespace {

std::string Data(const std::string& name) { return std::string(GPUFED_SOURCE_DIR) + "/bench/replay/testdata/" + name; }

TEST(Metrics, RoundsHalfToEvenLikePython) {
  EXPECT_EQ(ArrivedLevel(0.5), 0);
  EXPECT_EQ(ArrivedLevel(1.5), 2);
  EXPECT_EQ(ArrivedLevel(2.5), 2);
  EXPECT_EQ(ArrivedLevel(129.6), 130);
  EXPECT_EQ(ArrivedLevel(130.6), -1);
}

TEST(Metrics, MeansPerLevelAndCarriesGaps) {
  LevelCurve c;
  c.Record(100, 100, 10000);  // 1% arrived, 1% allocated
  c.Record(140, 120, 10000);  // 1.4% -> level 1, 1.2%
  c.Record(400, 300, 10000);  // level 4
  const std::vector<double> l = c.Levels();
  ASSERT_EQ(l.size(), 131u);
  EXPECT_DOUBLE_EQ(l[0], 0.0);
  EXPECT_DOUBLE_EQ(l[1], 1.1);
  EXPECT_DOUBLE_EQ(l[2], 1.1);  // carried
  EXPECT_DOUBLE_EQ(l[4], 3.0);
  EXPECT_DOUBLE_EQ(l[130], 3.0);
  EXPECT_EQ(MeanCurve({{1, 2}, {3, 4}}), (std::vector<double>{2, 3}));
}

TEST(OpenbExperiment, InflatesToRatioAndShufflesDeterministically) {
  OpenbTrace t;
  t.nodes = ReadOpenbNodes(Data("nodes.csv")).value();
  t.pods = ReadOpenbPods(Data("pods.csv")).value();
  const SeedWorkload a = BuildSeedWorkload(t, 42);
  const SeedWorkload b = BuildSeedWorkload(t, 42);
  EXPECT_EQ(a.node_order, b.node_order);
  ASSERT_EQ(a.arrivals.size(), b.arrivals.size());
  int64_t total = 0, originals = 0;
  for (const Arrival& x : a.arrivals) {
    total += t.pods[x.pod].TotalGpuMilli();
    originals += x.copy < 0 ? 1 : 0;
  }
  EXPECT_EQ(originals, static_cast<int64_t>(t.pods.size()));
  EXPECT_LE(total, 15 * 1000 * 13 / 10);  // 15 GPUs x 1.3
  EXPECT_GT(total, 15 * 1000 * 13 / 10 - 8000);  // stops only at a pod that would not fit
}

// Recomputes the curve from the placements file alone (plus the pod list) and
// checks it against the experiment's own numbers; also checks no GPU is overfull.
TEST(OpenbExperiment, PlacementsFileReproducesTheCurve) {
  OpenbTrace t;
  t.nodes = ReadOpenbNodes(Data("nodes.csv")).value();
  t.pods = ReadOpenbPods(Data("pods.csv")).value();
  std::map<std::string, const packing::PodRequest*> by_name;
  for (const auto& p : t.pods) by_name[p.name] = &p;
  int64_t capacity = 0;
  for (const auto& n : t.nodes) capacity += n.num_gpu * 1000;
  std::map<std::string, const packing::NodeSpec*> node_by_name;
  for (const auto& n : t.nodes) node_by_name[n.name] = &n;
  const packing::WorkloadDistribution dist = packing::WorkloadDistribution::FromPods(t.pods);

  for (const char* policy : {"firstfit", "fgd", "gpufed", "random"}) {
    std::map<std::string, std::pair<int64_t, int64_t>> node_use;  // node -> CPU, memory
    const SeedWorkload w = BuildSeedWorkload(t, 43);
    auto run = RunOpenb(t, w, policy, dist, /*record_placements=*/true);
    ASSERT_TRUE(run.ok()) << run.status().ToString();

    std::map<std::string, int> used;  // node/gpu -> milli
    std::vector<double> sum(131, 0.0);
    std::vector<int> count(131, 0);
    int64_t arrived = 0, allocated = 0;
    std::stringstream rows(run->placements_csv);
    std::string line;
    while (std::getline(rows, line)) {
      std::vector<std::string> f;
      std::stringstream ls(line);
      std::string cell;
      while (std::getline(ls, cell, ',')) f.push_back(cell);
      while (f.size() < 7) f.emplace_back();
      ASSERT_EQ(f[0], policy);
      std::string pod = f[3];
      if (auto k = pod.find("-tuned-"); k != std::string::npos) pod = pod.substr(0, k);
      const packing::PodRequest& req = *by_name.at(pod);
      arrived += req.TotalGpuMilli();
      if (!f[4].empty()) {  // CPU and memory within the node's capacity, GPU pods or not
        auto& [cpu, memory] = node_use[f[4]];
        cpu += req.cpu_milli;
        memory += req.memory_mib;
        ASSERT_LE(cpu, node_by_name.at(f[4])->cpu_milli) << policy;
        ASSERT_LE(memory, node_by_name.at(f[4])->memory_mib) << policy;
      }
      if (!f[4].empty() && !f[5].empty()) {
        std::stringstream gs(f[5]);
        std::string g;
        while (std::getline(gs, g, '|')) {
          int& u = used[f[4] + "/" + g];
          u += std::stoi(f[6]);
          ASSERT_LE(u, 1000) << policy;
          allocated += std::stoi(f[6]);
        }
      }
      const double pct = 100.0 * static_cast<double>(arrived) / static_cast<double>(capacity);
      const double lv = std::nearbyint(pct);
      if (lv >= 0 && lv <= 130) {
        sum[static_cast<size_t>(lv)] += 100.0 * static_cast<double>(allocated) / static_cast<double>(capacity);
        ++count[static_cast<size_t>(lv)];
      }
    }
    double carry = 0;
    for (size_t l = 0; l < 131; ++l) {
      if (count[l] > 0) carry = sum[l] / count[l];
      EXPECT_NEAR(run->levels[l], carry, 1e-9) << policy << " level " << l;
    }
  }
}

TEST(OpenbExperiment, FragmentationCurveIsAShareOfCapacity) {
  OpenbTrace t;
  t.nodes = ReadOpenbNodes(Data("nodes.csv")).value();
  t.pods = ReadOpenbPods(Data("pods.csv")).value();
  const packing::WorkloadDistribution dist = packing::WorkloadDistribution::FromPods(t.pods);
  auto run = RunOpenb(t, BuildSeedWorkload(t, 42), "gpufed", dist, false);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_EQ(run->frag_levels.size(), 131u);
  for (size_t l = 1; l < 131; ++l) {
    EXPECT_GE(run->frag_levels[l], 0.0) << l;
    // What is fragmented is never more than what is not allocated.
    EXPECT_LE(run->frag_levels[l], 100.0 - run->levels[l] + 1e-9) << l;
  }
}

}  // namespace
}  // namespace gpufed::replay
