#include "controller/audit/chargeback.h"

#include <gtest/gtest.h>

#include "controller/audit/journal.h"
#include "controller/audit/query.h"
#include "controller/audit/records.h"
#include "controller/audit/report.h"
#include "controller/audit/testing/test_journal.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

MeteredAttempt Attempt(const std::string& uid, int attempt, const std::string& tenant, const std::string& cluster,
                       const std::string& outcome, double gpu_seconds, const std::string& cost, int64_t booked_ms) {
  MeteredAttempt a;
  a.workload = uid.substr(0, uid.find('-'));
  a.uid = uid;
  a.attempt = attempt;
  a.tenant = tenant;
  a.cluster = cluster;
  a.outcome = outcome;
  a.gpu_seconds = gpu_seconds;
  a.cost = *Money::Parse(cost);
  a.booked_at = Duration::FromMillis(booked_ms);
  return a;
}

// As a reader sees it: the payload with the journal's header members.
nlohmann::json AsRead(const AuditRecord& r) {
  nlohmann::json j = r.payload;
  j["kind"] = RecordKindName(r.kind);
  return j;
}

nlohmann::json Placement(const std::string& tenant, const std::string& cluster, const std::string& cost) {
  return {{"kind", "decision"},
          {"outcome", "placed"},
          {"tenant", tenant},
          {"cost", cost},
          {"target", {{"cluster", cluster}}}};
}

RecordTime Day(int day) { return {true, 0, "+00:00:00", "day " + std::to_string(day)}; }

TEST(Chargeback, SumsMeteredAttemptsRequeuedOnesIncludedAndKeepsEstimatesApart) {
  ChargebackBuilder b(ChargebackGroup::kTenant);
  b.Add(Placement("nlp", "eu-cloud", "52.80 EUR"), Day(1));
  // Preempted after 1h of 8 GPUs: charged for what it used, then run again elsewhere.
  b.Add(AsRead(AttemptMeteredRecord(Attempt("ft-1", 1, "nlp", "eu-cloud", "preempted", 28800, "24.000001 EUR", 1))),
        Day(1));
  b.Add(Placement("nlp", "munich", "13.20 EUR"), Day(1));
  b.Add(AsRead(AttemptMeteredRecord(Attempt("ft-1", 2, "nlp", "munich", "succeeded", 14400.5, "8.80 EUR", 2))), Day(1));
  b.Add(AsRead(AttemptMeteredRecord(Attempt("blur-1", 1, "vision", "munich", "succeeded", 0.25, "0.1988 EUR", 3))),
        Day(1));
  b.Add({{"kind", "decision"}, {"outcome", "queued"}, {"tenant", "vision"}}, Day(1));
  b.Add({{"kind", "connector-action"}, {"tenant", "vision"}, {"cost", "1.00 EUR"}}, Day(1));
  Chargeback c = b.Finish();
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].group, "nlp");
  EXPECT_EQ(c.rows[0].currency, "EUR");
  EXPECT_EQ(c.rows[0].metered_micros, 32800001);
  EXPECT_EQ(c.rows[0].estimated_micros, 66000000);
  EXPECT_EQ(c.rows[0].gpu_milliseconds, 43200500);
  EXPECT_EQ(c.rows[0].attempts, 2);
  EXPECT_EQ(c.rows[0].requeued_attempts, 1);
  EXPECT_EQ(c.rows[0].placements, 2);
  EXPECT_EQ(c.rows[1].group, "vision");
  EXPECT_EQ(c.rows[1].metered_micros, 198800);
  EXPECT_EQ(c.rows[1].placements, 0);
  ASSERT_EQ(c.totals.size(), 1u);
  EXPECT_EQ(c.totals[0].metered_micros, 32998801);
  EXPECT_EQ(RenderChargebackCsv(c),
            "group,gpu_seconds,metered,estimated,currency\n"
            "nlp,43200.500,32.800001,66.00,EUR\n"
            "vision,0.250,0.1988,0.00,EUR\n");
  const std::string md = RenderChargebackMarkdown(c);
  EXPECT_NE(md.find("| **total** | 12.00 | **33.00 EUR** | 66.00 EUR | 3 (1) | 2 |"), std::string::npos) << md;
  nlohmann::json j = ChargebackToJson(c);
  EXPECT_EQ(j["by"], "tenant");
  EXPECT_EQ(j["rows"][0]["metered"], "32.800001");
  EXPECT_EQ(j["rows"][0]["gpuSeconds"], "43200.500");
  EXPECT_EQ(j["totals"][0]["metered"], "32.998801");
}

TEST(Chargeback, EachAttemptCountsOnceAsItsFirstRecordSays) {
  ChargebackBuilder b(ChargebackGroup::kTenant);
  AuditRecord first = AttemptMeteredRecord(Attempt("a-1", 1, "t", "c", "succeeded", 3600, "1.00 EUR", 1));
  b.Add(AsRead(first), Day(1));
  b.Add(AsRead(first), Day(1));  // a restart between the record and its booking repeats it
  b.Add(AsRead(AttemptMeteredRecord(Attempt("a-1", 2, "t", "c", "succeeded", 3600, "1.00 EUR", 2))), Day(1));
  Chargeback c = b.Finish();
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].metered_micros, 2000000);
  EXPECT_EQ(c.rows[0].attempts, 2);
  EXPECT_EQ(c.duplicate_records, 1);
}

TEST(Chargeback, GroupsByClusterOrDayAndKeepsCurrenciesApart) {
  ChargebackBuilder by_cluster(ChargebackGroup::kCluster);
  ChargebackBuilder by_day(ChargebackGroup::kDay);
  const std::vector<std::pair<AuditRecord, int>> records = {
      {AttemptMeteredRecord(Attempt("a-1", 1, "t", "onprem", "succeeded", 10, "1.00 EUR", 1)), 1},
      {AttemptMeteredRecord(Attempt("b-1", 1, "t", "us-cloud", "succeeded", 10, "2.00 USD", 1)), 2},
      {AttemptMeteredRecord(Attempt("c-1", 1, "u", "onprem", "succeeded", 10, "3.00 EUR", 1)), 2},
      // Lost before its cluster reported it: no price, nothing charged, joins its group.
      {AttemptMeteredRecord(Attempt("d-1", 1, "u", "onprem", "lost", 0, "0", 1)), 2}};
  for (const auto& [r, day] : records) {
    by_cluster.Add(AsRead(r), Day(day));
    by_day.Add(AsRead(r), Day(day));
  }
  EXPECT_EQ(RenderChargebackCsv(by_cluster.Finish()),
            "group,gpu_seconds,metered,estimated,currency\n"
            "onprem,20.000,4.00,0.00,EUR\n"
            "us-cloud,10.000,2.00,0.00,USD\n");
  Chargeback days = by_day.Finish();
  EXPECT_EQ(RenderChargebackCsv(days),
            "group,gpu_seconds,metered,estimated,currency\n"
            "day 1,10.000,1.00,0.00,EUR\n"
            "day 2,10.000,3.00,0.00,EUR\n"
            "day 2,10.000,2.00,0.00,USD\n");
  ASSERT_EQ(days.totals.size(), 2u);  // one per currency, never summed across
  EXPECT_EQ(days.rows[1].attempts, 2);
}

TEST(Chargeback, GroupNamesParse) {
  EXPECT_EQ(ParseChargebackGroup("tenant"), ChargebackGroup::kTenant);
  EXPECT_EQ(ParseChargebackGroup("cluster"), ChargebackGroup::kCluster);
  EXPECT_EQ(ParseChargebackGroup("day"), ChargebackGroup::kDay);
  EXPECT_FALSE(ParseChargebackGroup("month"));
  EXPECT_EQ(GpuSecondsText(1), "0.001");
  EXPECT_EQ(GpuSecondsText(7200500), "7200.500");
}

// Through a journal: the period is virtual run time in a simulated run.
TEST(Chargeback, FromAJournalWithVirtualTimesAndAPeriod) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  {
    auto journal = testing::OpenTestJournal(*env, dir.str());
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    for (int hour = 0; hour < 4; ++hour) {
      auto a = Attempt("w" + std::to_string(hour) + "-x", 1, "t", "c", "succeeded", 3600, "1.50 EUR",
                       int64_t{hour} * 3600000);
      ASSERT_TRUE((*journal)->Append(AttemptMeteredRecord(a)).ok());
    }
  }
  Result<Chargeback> all = BuildChargeback(*env, dir.str(), "", "", ChargebackGroup::kTenant);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->rows.size(), 1u);
  EXPECT_EQ(all->rows[0].metered_micros, 6000000);
  Result<Chargeback> middle = BuildChargeback(*env, dir.str(), "1h", "3h", ChargebackGroup::kTenant);
  ASSERT_TRUE(middle.ok());
  ASSERT_EQ(middle->rows.size(), 1u);
  EXPECT_EQ(middle->rows[0].metered_micros, 3000000);
  EXPECT_EQ(middle->rows[0].attempts, 2);
  EXPECT_EQ(BuildChargeback(*env, dir.str(), "soon", "", ChargebackGroup::kTenant).status().code(),
            StatusCode::kInvalidArgument);
  // The table shows each record's virtual time, not the commit time they share.
  std::vector<nlohmann::json> rows;
  std::vector<RecordTime> times;
  ASSERT_TRUE(ScanRecords(*env, dir.str(), {}, [&](const nlohmann::json& r, const RecordTime& t) {
                rows.push_back(r);
                times.push_back(t);
              }).ok());
  const std::string table = RenderQueryTable(rows, times);
  EXPECT_NE(table.find("+03:00:00"), std::string::npos) << table;
  EXPECT_NE(table.find("1.50 EUR"), std::string::npos) << table;
}

}  // namespace
}  // namespace gpufed::audit
