// `gpufed run`'s summary covers its own process, and agrees with the journal: the
// quickstart federation runs 8 virtual hours, stops, and a second process on the same
// state folder runs it to idle. The second summary counts only what its journal span
// (after its controller-start) holds: booked cost, outcomes, and GPU time within its own
// run time, so no cluster reads above 100 % (before, the first process's GPU-hours were
// counted against the second's capacity).
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>

#include "controller/audit/query.h"
#include "controller/cli/run_summary.h"
#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {
namespace {

constexpr int64_t kFirstProcessMillis = int64_t{8} * 3600 * 1000;

struct JournalSpan {
  std::map<std::string, int64_t> cost_micros;  // per currency
  std::map<std::string, double> gpu_seconds;   // per cluster, within [start, end]
  int64_t succeeded = 0;
  int64_t metered = 0;
};

// What the journal's records after its last controller-start say of [start, end].
JournalSpan ReadLastProcess(const std::string& audit_dir, Duration start, Duration end) {
  JournalSpan span;
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  Status scanned = audit::ScanRecords(*env, audit_dir, {}, [&](const nlohmann::json& r) {
    const std::string kind = r.value("kind", "");
    if (kind == "controller-start") span = {};
    if (kind != "attempt-metered") return;
    ++span.metered;
    if (r.value("outcome", "") == "succeeded") ++span.succeeded;
    Result<Money> cost = Money::Parse(r.value("cost", "0.00"));
    ASSERT_TRUE(cost.ok()) << r.dump();
    span.cost_micros[cost->currency()] += cost->micros();
    const double began = r.value("startedMillis", 0.0), ended = r.value("finishedMillis", 0.0);
    const double run = (ended - began) / 1000.0;
    const double overlap = (std::min<double>(ended, static_cast<double>(end.millis())) -
                            std::max<double>(began, static_cast<double>(start.millis()))) /
                           1000.0;
    if (run > 0 && overlap > 0) span.gpu_seconds[r.value("cluster", "")] += r.value("gpuSeconds", 0.0) * overlap / run;
  });
  EXPECT_TRUE(scanned.ok()) << scanned.ToString();
  return span;
}

class RunSummaryAfterRestart : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/gpufed_it_run_summary_" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Repo() const { return std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart"; }
  std::string dir_;
};

TEST_F(RunSummaryAfterRestart, TheSecondProcessReportsItsOwnSpanAsItsJournalDoes) {
  Duration first_end;
  {
    Harness first;
    ASSERT_TRUE(first.OpenRuntime(Repo(), dir_ + "/state", Repo() + "/simulation/scenario.yaml").ok());
    while (first.clock.Now().millis() < kFirstProcessMillis) {
      ASSERT_TRUE(first.app->Step().ok());
      first.Step();
    }
    first_end = first.clock.Now();
    ASSERT_TRUE(first.Stop("first process done").ok());
    Result<std::vector<store::AttemptRow>> booked = first.Ctl().store()->Attempts();
    ASSERT_TRUE(booked.ok());
    ASSERT_GT(booked->size(), 10u) << "the first process should book work the second must not count";
  }
  Harness second;
  second.clock.AdvanceTo(first_end);
  ASSERT_TRUE(second.OpenRuntime(Repo(), dir_ + "/state", Repo() + "/simulation/scenario.yaml").ok());
  EXPECT_EQ(second.app->process_start().at, first_end);
  ASSERT_TRUE(second.RunUntilIdle().ok());
  cli::RunSpan span;
  span.start = second.app->process_start().at;
  span.mark = second.app->process_start().mark;
  span.end = second.clock.Now();
  ASSERT_TRUE(second.Stop("second process done").ok());
  Result<cli::ProcessSummary> summary = cli::SummarizeProcess(*second.Ctl().store(), second.app->revision().config,
                                                              span, second.Ctl().OfferedGpuSeconds());
  ASSERT_TRUE(summary.ok()) << summary.status().ToString();

  const JournalSpan journal = ReadLastProcess(dir_ + "/state/audit", span.start, span.end);
  ASSERT_GT(journal.metered, 0) << "the second process should book work of its own";
  std::map<std::string, int64_t> summary_cost;
  for (const auto& [currency, money] : summary->cost.by_currency()) summary_cost[currency] = money.micros();
  EXPECT_EQ(summary_cost, journal.cost_micros);
  EXPECT_EQ(summary->Ended("Succeeded"), journal.succeeded);
  ASSERT_FALSE(summary->clusters.empty());
  for (const cli::ProcessSummary::ClusterUse& c : summary->clusters) {
    // The journal rounds gpuSeconds to the millisecond; nothing runs at the idle stop.
    EXPECT_NEAR(c.used_gpu_seconds, journal.gpu_seconds.count(c.name) ? journal.gpu_seconds.at(c.name) : 0.0, 1.0)
        << c.name;
    // Judged on the GPUs it had (the elastic us-cloud grows past its declared nodes).
    EXPECT_GT(c.offered_gpu_seconds, 0) << c.name;
    EXPECT_LE(c.used_gpu_seconds, c.offered_gpu_seconds * 1.01) << c.name << " above 100 %";
  }
  const std::string text = cli::RenderSummary(*summary, second.Ctl().pass_stats());
  EXPECT_NE(text.find("this process: +08:00:00 to +"), std::string::npos) << text;
  EXPECT_NE(text.find("of virtual time"), std::string::npos) << text;
}

TEST(RunSummaryText, AWallClockRunSaysWallClockAndAShortRunShowsMinutesNotZeroHours) {
  cli::ProcessSummary s;
  s.span.wall_clock = true;
  s.span.start = Duration::FromMillis(int64_t{1795000000000});  // 2026-11-18, a Unix time
  s.span.end = s.span.start + Duration::FromSeconds(90);
  s.clusters.push_back({"lab", 230.4, 720, true});  // 8 GPUs x 90 s = 12 GPU-min; 3.84 GPU-min used
  s.clusters.push_back({"gone", 60, 0, false});
  s.ended["Succeeded"] = 2;
  const std::string text = cli::RenderSummary(s, {});
  EXPECT_NE(text.find("(1m30s of wall-clock time)"), std::string::npos) << text;
  EXPECT_NE(text.find("per hour of wall-clock time"), std::string::npos) << text;
  EXPECT_EQ(text.find("virtual"), std::string::npos) << text;
  EXPECT_NE(text.find("3.8 GPU-min of     12.0 GPU-min   32.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("this process: 2026-11-18T"), std::string::npos) << text;
  EXPECT_NE(text.find("gone             60.0 GPU-s, not observed in this process  (no longer declared)"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace gpufed::testing
