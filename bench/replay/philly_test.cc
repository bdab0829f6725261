// The Philly replay: the trace window, and the figures recomputed independently from
// the --jobs schedule, which must also respect on-prem capacity at every instant.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "bench/replay/philly_command.h"
#include "bench/replay/philly_sim.h"

namespace gpufed::replay {
namespace {

const std::string kData = std::string(GPUFED_SOURCE_DIR) + "/bench/replay/testdata/";

TEST(PhillyTrace, ReadsTheWindowSortedAndNamesBadCells) {
  auto jobs = ReadPhillyWindow(kData + "philly_tiny.csv", *ParsePhillyTime("2017-10-02"), 1);
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  EXPECT_EQ(jobs->size(), 241u);  // 240 + the wide one; the days before and after are out
  for (size_t i = 1; i < jobs->size(); ++i) EXPECT_LE((*jobs)[i - 1].submit_ms, (*jobs)[i].submit_ms);
  EXPECT_EQ(jobs->front().tenant.substr(0, 3), "vc-");
  auto bad = ReadPhillyWindow(kData + "philly_bad.csv", *ParsePhillyTime("2017-10-02"), 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("philly_bad.csv:3: column 'duration'"), std::string::npos)
      << bad.status().message();
  EXPECT_FALSE(ParsePhillyTime("2017-13-01").has_value());
  EXPECT_EQ(*ParsePhillyTime("1970-01-02 00:00:01"), 86401);
}

TEST(PhillyShape, GangsAboveEightGpusUseWholeMembers) {
  EXPECT_EQ(ShapeOf(4).members, 1);
  EXPECT_EQ(ShapeOf(16).members, 2);
  EXPECT_EQ(ShapeOf(16).per_member, 8);
  EXPECT_EQ(ShapeOf(12).total(), 12);  // 2 x 6
  EXPECT_EQ(ShapeOf(9).total(), 10);   // 2 x 5: rounds up to whole members
}

struct Row {
  std::string strategy, tenant, cluster;
  int gpus = 0;
  double submit = 0, start = -1, end = -1;
};

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.push_back("");
  return cells;
}

TEST(PhillyReplay, FiguresRecomputeFromTheJobsFileAndCapacityHolds) {
  const std::string jobs_path = (std::filesystem::temp_directory_path() / "philly_jobs_test.csv").string();
  PhillyOptions o;
  o.trace = kData + "philly_tiny.csv";
  o.from = "2017-10-02";
  o.days = 1;
  o.onprem_gpus = 32;
  o.cloud_price = 2.5;
  o.format = "csv";
  o.jobs_file = jobs_path;
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(RunPhillyCommand(o), 0);
  const std::string csv = ::testing::internal::GetCapturedStdout();

  std::ifstream in(jobs_path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "strategy,job,tenant,gpus,submit_s,start_s,end_s,cluster");
  std::map<std::string, std::vector<Row>> rows;
  while (std::getline(in, line)) {
    std::vector<std::string> c = Split(line);
    ASSERT_EQ(c.size(), 8u) << line;
    Row r{c[0], c[2], c[7], std::stoi(c[3]), std::stod(c[4]), c[5].empty() ? -1 : std::stod(c[5]),
          c[6].empty() ? -1 : std::stod(c[6])};
    rows[r.strategy].push_back(r);
  }
  ASSERT_EQ(rows.size(), 3u);

  // Recompute every figure from the schedule alone.
  std::map<std::string, std::string> expected;
  const double window = 86400;
  for (auto& [strategy, list] : rows) {
    EXPECT_EQ(list.size(), 240u) << strategy;  // the 32-GPU job is wider than on-prem: left out
    std::vector<double> waits;
    double jct = 0, onprem_gpu_s = 0, cloud_gpu_s = 0;
    std::vector<std::pair<double, int>> deltas;  // on-prem GPUs in use changes
    for (const Row& r : list) {
      ASSERT_GE(r.start, r.submit) << strategy;
      ASSERT_GE(r.end, r.start) << strategy;
      waits.push_back(r.start - r.submit);
      jct += r.end - r.submit;
      if (r.cluster == "cloud") {
        EXPECT_NE(strategy, "onprem-only");
        cloud_gpu_s += r.gpus * (r.end - r.start);
      } else {
        ASSERT_EQ(r.cluster, "onprem");
        onprem_gpu_s += r.gpus * std::max(0.0, std::min(r.end, window) - std::max(r.start, 0.0));
        if (r.end > r.start) {
          deltas.push_back({r.start, r.gpus});
          deltas.push_back({r.end, -r.gpus});
        }
      }
    }
    // Capacity: ends before starts at the same instant; never above 32 GPUs.
    std::sort(deltas.begin(), deltas.end());
    int in_use = 0, peak = 0;
    for (const auto& [t, d] : deltas) {
      in_use += d;
      peak = std::max(peak, in_use);
      ASSERT_LE(in_use, 32) << strategy << " at t=" << t;
    }
    EXPECT_GT(peak, 24) << strategy;  // the trace loads the cluster
    double mean_wait = 0;
    for (double w : waits) mean_wait += w;
    mean_wait /= waits.size();
    std::sort(waits.begin(), waits.end());
    const double p95 = waits[static_cast<size_t>(std::ceil(0.95 * waits.size())) - 1];
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s,%zu,%.1f,%.1f,%.1f,%.2f,%.2f,%.2f", strategy.c_str(), list.size(), mean_wait,
                  p95, jct / list.size(), 100.0 * onprem_gpu_s / (32 * window), cloud_gpu_s / 3600,
                  cloud_gpu_s / 3600 * 2.5);
    expected[strategy] = buf;
  }
  std::stringstream out(csv);
  ASSERT_TRUE(std::getline(out, line));
  EXPECT_EQ(line, "strategy,jobs,mean_wait_s,p95_wait_s,mean_jct_s,onprem_util_pct,cloud_gpu_hours,cloud_cost");
  int n = 0;
  std::map<std::string, std::vector<double>> figures;
  while (std::getline(out, line)) {
    std::vector<std::string> c = Split(line);
    ASSERT_EQ(c.size(), 8u);
    EXPECT_EQ(line, expected[c[0]]);
    for (size_t i = 1; i < c.size(); ++i) figures[c[0]].push_back(std::stod(c[i]));
    ++n;
  }
  EXPECT_EQ(n, 3);
  // The goal on this loaded fixture: gpufed waits less than onprem-only and spends
  // less on the cloud than always-cheapest.
  EXPECT_LT(figures["gpufed"][1], figures["onprem-only"][1]);
  EXPECT_LT(figures["gpufed"][6], figures["always-cheapest"][6]);
  std::filesystem::remove(jobs_path);
}

}  // namespace
}  // namespace gpufed::replay
