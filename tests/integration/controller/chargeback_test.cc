// Chargeback from metered usage, end to end: the quickstart federation runs through the
// runtime of `gpufed run` until idle (an EU cloud outage requeues work, low-priority
// sweeps are preempted), then
//  - the journal holds one attempt-metered record per booked attempt, requeued ones
//    included with what they used;
//  - `gpufed audit report --chargeback` equals the store's metering to the micro-unit
//    (so the `run` summary's "cost: total" to the cent), in every grouping;
//  - its CSV has exactly the columns finance imports;
//  - a compliance violation in a journal makes `audit report` exit 3 and say so first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "controller/audit/journal.h"
#include "controller/audit/query.h"
#include "controller/audit/report.h"
#include "controller/cli/cli.h"
#include "controller/cli/run_summary.h"
#include "controller/config/loader.h"
#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {
namespace {

// Runs `gpufed ARGS...` in process; returns the exit code, stdout in *out.
int RunCli(std::vector<std::string> args, std::string* out) {
  args.insert(args.begin(), "gpufed");
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  int rc = cli::Main(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old);
  *out = captured.str();
  return rc;
}

std::vector<std::vector<std::string>> CsvRows(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::istringstream fs(line);
    for (std::string f; std::getline(fs, f, ',');) fields.push_back(f);
    rows.push_back(fields);
  }
  return rows;
}

class QuickstartChargeback : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Per process: ctest runs each test of this suite in its own process, maybe at once.
    dir_ = new std::string(::testing::TempDir() + "/gpufed_it_chargeback_" + std::to_string(::getpid()));
    std::filesystem::remove_all(*dir_);
    const std::string repo = std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart";
    Harness h;
    Status opened = h.OpenRuntime(repo, *dir_ + "/state", repo + "/simulation/scenario.yaml");
    ASSERT_TRUE(opened.ok()) << opened.ToString();
    ASSERT_TRUE(h.RunUntilIdle().ok());
    Result<std::vector<store::AttemptRow>> attempts = h.Ctl().store()->Attempts();
    ASSERT_TRUE(attempts.ok());
    attempts_ = new std::vector<store::AttemptRow>(*attempts);
    Result<std::vector<store::StateCount>> counts = h.Ctl().store()->CountByState();
    ASSERT_TRUE(counts.ok());
    counts_ = new std::vector<store::StateCount>(*counts);
    config::LoadResult loaded = config::LoadRepository({repo});
    ASSERT_TRUE(loaded.ok());
    cli::RunSpan span;
    span.start = h.app->process_start().at;
    span.mark = h.app->process_start().mark;
    span.end = h.clock.Now();
    Result<cli::ProcessSummary> summary =
        cli::SummarizeProcess(*h.Ctl().store(), loaded.config, span, h.Ctl().OfferedGpuSeconds());
    ASSERT_TRUE(summary.ok()) << summary.status().ToString();
    summary_ = new std::string(cli::RenderSummary(*summary, h.Ctl().pass_stats()));
    ASSERT_TRUE(h.app->Stop("test done").ok());
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
    delete attempts_;
    delete counts_;
    delete summary_;
  }
  static std::string AuditDir() { return *dir_ + "/state/audit"; }

  static std::string* dir_;
  static std::vector<store::AttemptRow>* attempts_;
  static std::vector<store::StateCount>* counts_;
  static std::string* summary_;
};
std::string* QuickstartChargeback::dir_ = nullptr;
std::vector<store::AttemptRow>* QuickstartChargeback::attempts_ = nullptr;
std::string* QuickstartChargeback::summary_ = nullptr;
std::vector<store::StateCount>* QuickstartChargeback::counts_ = nullptr;

// What /metrics (gpufed_cost_total) and the live view count, the workloads' own totals,
// is the same money as the booked attempts: a preempted victim's attempt included.
TEST_F(QuickstartChargeback, EveryTenantsWorkloadTotalsAddUpToItsBookedAttempts) {
  std::map<std::string, int64_t> booked, counted;
  for (const store::AttemptRow& a : *attempts_) booked[a.tenant] += a.cost.micros();
  for (const store::StateCount& c : *counts_) counted[c.tenant] += c.cost.micros();
  for (auto it = counted.begin(); it != counted.end();)
    it = it->second == 0 && !booked.count(it->first) ? counted.erase(it) : std::next(it);
  EXPECT_EQ(counted, booked);
}

TEST_F(QuickstartChargeback, EveryBookedAttemptIsJournalledOnceRequeuedOnesIncluded) {
  ASSERT_FALSE(attempts_->empty());
  std::map<std::string, const store::AttemptRow*> booked;
  int requeued_charged = 0;
  for (const store::AttemptRow& a : *attempts_) {
    booked[a.uid + "#" + std::to_string(a.attempt)] = &a;
    if ((a.outcome == "preempted" || a.outcome == "lost") && a.cost.micros() > 0) ++requeued_charged;
  }
  EXPECT_GT(requeued_charged, 0) << "the scenario should requeue work that had used GPUs";
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  audit::QueryFilter metered;
  metered.kind = "attempt-metered";
  std::set<std::string> journalled;
  ASSERT_TRUE(audit::ScanRecords(*env, AuditDir(), metered, [&](const nlohmann::json& r) {
                const std::string key = r["uid"].get<std::string>() + "#" + std::to_string(r["attempt"].get<int>());
                EXPECT_TRUE(journalled.insert(key).second) << "twice: " << key;
                auto it = booked.find(key);
                ASSERT_NE(it, booked.end()) << r.dump();
                EXPECT_EQ(r["cost"], it->second->cost.ToString());
                EXPECT_EQ(r["outcome"], it->second->outcome);
                EXPECT_EQ(r["tenant"], it->second->tenant);
                EXPECT_EQ(r["cluster"], it->second->cluster);
              }).ok());
  EXPECT_EQ(journalled.size(), booked.size());
}

TEST_F(QuickstartChargeback, ReconcilesWithTheStoresMeteringInEveryGrouping) {
  std::map<std::string, int64_t> by_tenant, by_cluster;
  int64_t total = 0;
  for (const store::AttemptRow& a : *attempts_) {
    by_tenant[a.tenant] += a.cost.micros();
    by_cluster[a.cluster] += a.cost.micros();
    total += a.cost.micros();
  }
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  for (audit::ChargebackGroup by :
       {audit::ChargebackGroup::kTenant, audit::ChargebackGroup::kCluster, audit::ChargebackGroup::kDay}) {
    Result<audit::Chargeback> c = audit::BuildChargeback(*env, AuditDir(), "", "", by);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ASSERT_EQ(c->totals.size(), 1u);
    EXPECT_EQ(c->totals[0].metered_micros, total) << audit::ChargebackGroupName(by);
    EXPECT_EQ(c->totals[0].currency, "EUR");
    EXPECT_EQ(c->totals[0].attempts, static_cast<int64_t>(attempts_->size()));
    EXPECT_EQ(c->duplicate_records, 0);
    EXPECT_GT(c->totals[0].estimated_micros, 0);  // shown beside, never added in
    if (by == audit::ChargebackGroup::kDay) continue;
    const auto& expected = by == audit::ChargebackGroup::kTenant ? by_tenant : by_cluster;
    std::map<std::string, int64_t> got;
    for (const audit::ChargebackRow& row : c->rows) got[row.group] += row.metered_micros;
    EXPECT_EQ(got, expected) << audit::ChargebackGroupName(by);
  }
  // The run summary's total is the same money, to the cent.
  EXPECT_NE(summary_->find("cost: total " + Money(total, "EUR").ToDisplayString()), std::string::npos) << *summary_;
}

TEST_F(QuickstartChargeback, CsvHasTheColumnsFinanceImportsAndSumsToTheMeteredTotal) {
  int64_t total = 0;
  for (const store::AttemptRow& a : *attempts_) total += a.cost.micros();
  for (const char* by : {"tenant", "cluster", "day"}) {
    std::string out;
    ASSERT_EQ(RunCli({"audit", "report", "-d", AuditDir(), "--chargeback", "--by", by, "--format", "csv"}, &out), 0)
        << out;
    std::vector<std::vector<std::string>> rows = CsvRows(out);
    ASSERT_GE(rows.size(), 2u) << out;
    EXPECT_EQ(rows[0], (std::vector<std::string>{"group", "gpu_seconds", "metered", "estimated", "currency"}));
    int64_t sum = 0;
    std::set<std::string> groups;
    for (size_t i = 1; i < rows.size(); ++i) {
      ASSERT_EQ(rows[i].size(), 5u) << out;
      EXPECT_TRUE(groups.insert(rows[i][0]).second) << "one row per group: " << out;
      Result<Money> metered = Money::Parse(rows[i][2] + " " + rows[i][4]);
      ASSERT_TRUE(metered.ok()) << rows[i][2];
      sum += metered->micros();
      EXPECT_TRUE(Money::Parse(rows[i][3]).ok()) << rows[i][3];
    }
    EXPECT_EQ(sum, total) << by << "\n" << out;
  }
  // Default: by tenant, the quickstart's three tenants.
  std::string out;
  ASSERT_EQ(RunCli({"audit", "report", "-d", AuditDir(), "--chargeback", "-f", "csv"}, &out), 0);
  EXPECT_EQ(CsvRows(out).size(), 4u) << out;
  EXPECT_EQ(out.rfind("group,gpu_seconds,metered,estimated,currency\nteam-nlp,", 0), 0u) << out;
  // --by only with --chargeback: a usage error.
  EXPECT_NE(RunCli({"audit", "report", "-d", AuditDir(), "--by", "day"}, &out), 0);
}

TEST_F(QuickstartChargeback, TheReportShowsVirtualTimesAndNoViolation) {
  std::string out;
  ASSERT_EQ(RunCli({"audit", "report", "-d", AuditDir()}, &out), 0) << out;
  EXPECT_NE(out.find("Compliance: all "), std::string::npos) << out;
  EXPECT_EQ(out.find("VIOLATION"), std::string::npos) << out;
  EXPECT_NE(out.find("| +06:00:00 |"), std::string::npos) << out;  // the run's virtual time, not the wall clock
  ASSERT_EQ(
      RunCli({"audit", "query", "-d", AuditDir(), "--kind", "attempt-metered", "--from", "6h", "--to", "7h"}, &out), 0);
  EXPECT_NE(out.find("+06:"), std::string::npos) << out;
  EXPECT_EQ(out.find("+05:"), std::string::npos) << out;
}

TEST(ComplianceVerdicts, AViolationMakesTheReportExit3AndSaySoFirst) {
  std::string dir = FreshDir("compliance_violation") + "/audit";
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  {
    audit::JournalOptions o;
    o.env = env.get();
    o.dir = dir;
    auto journal = audit::AuditJournal::Open(o, nullptr);
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    // What only a policy change or a bug could write: EU-resident data placed in the US.
    nlohmann::json placed = {
        {"workload", "claims"},
        {"tenant", "nlp"},
        {"outcome", "placed"},
        {"revision", "r1"},
        {"decidedAtMillis", 60000},
        {"cost", "10.00 EUR"},
        {"data", {{"sensitivity", "internal"}, {"pii", false}, {"residency", {"eu"}}}},
        {"target", {{"cluster", "us-cloud"}, {"zone", "us"}, {"region", "us-east"}, {"provider", "aws"}}}};
    ASSERT_TRUE((*journal)->Append({audit::RecordKind::kDecision, placed}).ok());
  }
  std::string out;
  EXPECT_EQ(RunCli({"audit", "report", "-d", dir}, &out), 3) << out;
  EXPECT_EQ(out.find("# gpufed audit report\n\n> **COMPLIANCE VIOLATION: 1 placement"), 0u) << out;
  EXPECT_NE(out.find("**VIOLATION** data-residency: data must stay in eu; ran on us-cloud (provider aws, zone us, "
                     "region us-east)"),
            std::string::npos)
      << out;
  EXPECT_EQ(RunCli({"audit", "report", "-d", dir, "-f", "json"}, &out), 3);
  EXPECT_EQ(nlohmann::json::parse(out)["sensitive"][0]["verdict"], "VIOLATION");
  // The chargeback alone is not a compliance verdict.
  EXPECT_EQ(RunCli({"audit", "report", "-d", dir, "--chargeback"}, &out), 0) << out;
}

}  // namespace
}  // namespace gpufed::testing
