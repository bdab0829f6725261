#include "controller/reconcile/history.h"

#include <gtest/gtest.h>

#include "tests/testutil/temp_dir.h"

namespace gpufed::reconcile {
namespace {

std::vector<ClusterView> Fleet(double allocated) {
  ClusterView c;
  c.name = "onprem";
  c.models = {{"A100-80GB", allocated, 8}};
  return {c};
}

std::vector<TenantView> Tenants(int64_t alpha_queued, int64_t beta_queued) {
  TenantView a;
  a.name = "alpha";
  a.queued = alpha_queued;
  a.spent = Money(12'500'000, "EUR");
  a.limit = Money(100'000'000, "EUR");
  a.currency = "EUR";
  TenantView b;
  b.name = "beta";
  b.queued = beta_queued;
  return {a, b};
}

TEST(History, SamplesAtMostOncePerIntervalAndARestartKeepsTheLastWindow) {
  testutil::TempDir dir;
  auto store = store::Store::Open(dir.str() + "/gpufed.db");
  ASSERT_TRUE(store.ok());
  HistoryOptions o{Duration::FromSeconds(60), Duration::FromSeconds(3600)};
  {
    History h(store->get(), o);
    ASSERT_TRUE(h.Restore(Duration()).ok());
    EXPECT_TRUE(h.Due(Duration()));
    for (int minute = 0; minute < 90; ++minute) {
      const Duration now = Duration::FromSeconds(minute * 60);
      ASSERT_TRUE(h.Due(now));
      ASSERT_TRUE(h.Sample(now, Fleet(minute % 8), Tenants(minute, 0)).ok());
      EXPECT_FALSE(h.Due(Duration::FromSeconds(minute * 60 + 59)));
    }
    EXPECT_EQ(h.size(), 61u);  // minutes 29..89: an hour's window, both ends included
  }
  History restarted(store->get(), o);
  ASSERT_TRUE(restarted.Restore(Duration::FromSeconds(89 * 60)).ok());
  EXPECT_EQ(restarted.size(), 61u);
  const nlohmann::json samples = restarted.ToJson("")["samples"];
  ASSERT_EQ(samples.size(), 61u);
  EXPECT_EQ(samples.front()["atSeconds"], 29 * 60);
  EXPECT_EQ(samples.back()["queue"]["alpha"], 89);
  EXPECT_EQ(samples.back()["clusters"]["onprem"]["allocated"], 89 % 8);
  EXPECT_EQ(samples.back()["clusters"]["onprem"]["capacity"], 8);
  EXPECT_EQ(samples.back()["spend"]["alpha"]["spent"], "12.50");
  EXPECT_EQ(samples.back()["spend"]["alpha"]["limit"], "100.00");
  EXPECT_TRUE(samples.back()["spend"]["beta"]["limit"].is_null());
}

TEST(History, ATenantSeesOnlyItsOwnQueueAndSpend) {
  testutil::TempDir dir;
  auto store = store::Store::Open(dir.str() + "/gpufed.db");
  ASSERT_TRUE(store.ok());
  History h(store->get());
  ASSERT_TRUE(h.Sample(Duration::FromSeconds(5), Fleet(3), Tenants(2, 7)).ok());
  const nlohmann::json beta = h.ToJson("beta")["samples"][0];
  EXPECT_EQ(beta["queue"], (nlohmann::json{{"beta", 7}}));
  EXPECT_EQ(beta["spend"].size(), 1u);
  EXPECT_FALSE(beta["spend"].contains("alpha"));
  EXPECT_EQ(beta["clusters"]["onprem"]["allocated"], 3);  // the fleet is no tenant's secret
  EXPECT_EQ(h.ToJson("")["samples"][0]["queue"].size(), 2u);
}

}  // namespace
}  // namespace gpufed::reconcile
