#include "controller/reconcile/budget_watch.h"

#include <gtest/gtest.h>

#include <ctime>

#include "tests/testutil/temp_dir.h"

namespace gpufed::reconcile {
namespace {

Duration Day(int year, int month, int day) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  return Duration::FromSeconds(static_cast<int64_t>(timegm(&tm)));
}

// The budget period labels are tested with the spend function (placement/tenant_spend_test.cc).

class BudgetWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = std::move(store::Store::Open(dir_.str() + "/gpufed.db")).value();
    model::Tenant t;
    t.metadata.name = "nlp";
    t.budget.limit = Money(100'000'000, "EUR");
    t.budget.alert_at = {0.5, 0.9};
    config_.tenants.push_back(t);
    store::WorkloadRecord r;
    r.name = "train";
    r.uid = "train-1";
    r.tenant = "nlp";
    ASSERT_TRUE(store_->Submit(r, now_).ok());
  }
  // The running attempt's estimate, in whole euros.
  void Estimate(int64_t euros) {
    store::WorkloadRecord r = store_->Get("nlp", "train").value().value();
    r.state = store::WorkloadState::kRunning;
    r.estimate = Money(euros * 1'000'000, "EUR");
    ASSERT_TRUE(store_->Update(r, "test", now_).ok());
  }
  // Reports and remembers what crossed; returns the levels.
  std::vector<double> Report() {
    std::vector<double> levels;
    auto crossings = watch_.NewCrossings(config_, now_);
    EXPECT_TRUE(crossings.ok());
    for (const BudgetCrossing& c : *crossings) {
      levels.push_back(c.level);
      EXPECT_TRUE(watch_.Remember(c, now_).ok());
    }
    return levels;
  }
  testutil::TempDir dir_;
  std::unique_ptr<store::Store> store_;
  BudgetWatch watch_{nullptr};
  model::Config config_;
  Duration now_ = Day(2026, 11, 23);
};

TEST_F(BudgetWatchTest, EachLevelIsReportedOncePerPeriod) {
  watch_ = BudgetWatch(store_.get());
  Estimate(40);
  EXPECT_EQ(Report(), std::vector<double>{});
  Estimate(60);
  EXPECT_EQ(Report(), std::vector<double>{0.5});
  EXPECT_EQ(Report(), std::vector<double>{});
  Estimate(45);  // the metered cost came in lower, then spending rose again
  Estimate(70);
  EXPECT_EQ(Report(), std::vector<double>{});
  Estimate(95);
  EXPECT_EQ(Report(), std::vector<double>{0.9});
  auto spend = watch_.Spend(config_, now_);
  ASSERT_TRUE(spend.ok());
  EXPECT_EQ((*spend)[0].alerts.size(), 2u);
  EXPECT_EQ((*spend)[0].spent.ToString(), Money(95'000'000, "EUR").ToString());
  // A new month starts over.
  now_ = Day(2026, 12, 1);
  EXPECT_EQ(Report(), (std::vector<double>{0.5, 0.9}));
  // And a restarted controller (a new watch on the same store) remembers.
  BudgetWatch again(store_.get());
  auto more = again.NewCrossings(config_, now_);
  ASSERT_TRUE(more.ok());
  EXPECT_TRUE(more->empty());
}

TEST_F(BudgetWatchTest, MeteredCostCountsInThePeriodItWasBookedIn) {
  watch_ = BudgetWatch(store_.get());
  auto book = [&](const std::string& uid, int64_t euros, bool cloud, Duration finished) {
    store::AttemptRow a;
    a.workload = uid;
    a.attempt = 1;
    a.tenant = "nlp";
    a.cluster = cloud ? "cloud" : "onprem";
    a.outcome = "succeeded";
    a.cost = Money(euros * 1'000'000, "EUR");
    a.cloud = cloud;
    a.finished = finished;
    a.uid = uid;
    ASSERT_TRUE(store_->FinishAttempt(a).ok());
  };
  book("old-u1", 70, false, Day(2026, 10, 31));  // October's
  book("new-u2", 20, true, Day(2026, 11, 2));
  book("new-u3", 10, false, Day(2026, 11, 23));
  Estimate(5);
  auto spend = watch_.Spend(config_, now_);
  ASSERT_TRUE(spend.ok());
  ASSERT_EQ(spend->size(), 1u);
  EXPECT_EQ((*spend)[0].spent.ToString(), Money(35'000'000, "EUR").ToString());  // 20 + 10 + the estimate
  EXPECT_EQ((*spend)[0].cloud_spent.ToString(), Money(20'000'000, "EUR").ToString());
  EXPECT_EQ((*spend)[0].period_label, "2026-11");
  // Without October's cost no level is reached (with it, 105 EUR would pass both).
  EXPECT_EQ(Report(), std::vector<double>{});
}

}  // namespace
}  // namespace gpufed::reconcile
