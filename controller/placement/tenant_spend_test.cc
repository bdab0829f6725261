#include "controller/placement/tenant_spend.h"

#include <gtest/gtest.h>

#include <ctime>

namespace gpufed::placement {
namespace {

Duration At(int year, int month, int day, int hour = 0, int minute = 0) {
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  return Duration::FromSeconds(static_cast<int64_t>(timegm(&tm)));
}

Money Eur(int64_t euros) { return Money(euros * 1'000'000, "EUR"); }

model::Tenant Tenant(const std::string& name, model::BudgetPeriod period) {
  model::Tenant t;
  t.metadata.name = name;
  t.budget.period = period;
  t.budget.limit = Eur(100);
  t.budget.cloud_limit = Eur(40);
  return t;
}

TEST(BudgetPeriodLabel, NamesTheCalendarPeriod) {
  EXPECT_EQ(BudgetPeriodLabel(model::BudgetPeriod::kDaily, At(2026, 11, 23)), "2026-11-23");
  EXPECT_EQ(BudgetPeriodLabel(model::BudgetPeriod::kMonthly, At(2026, 11, 23)), "2026-11");
  EXPECT_EQ(BudgetPeriodLabel(model::BudgetPeriod::kWeekly, At(2026, 11, 23)), "2026-W48");
  // ISO weeks belong to the year of their Thursday.
  EXPECT_EQ(BudgetPeriodLabel(model::BudgetPeriod::kWeekly, At(2021, 1, 1)), "2020-W53");
  EXPECT_EQ(BudgetPeriodLabel(model::BudgetPeriod::kWeekly, At(2024, 12, 30)), "2025-W01");
  EXPECT_EQ(BudgetPeriodLabel(model::BudgetPeriod::kWeekly, At(2026, 1, 1)), "2026-W01");
  // Virtual runs count from the epoch.
  EXPECT_EQ(BudgetPeriodLabel(model::BudgetPeriod::kMonthly, Duration::FromSeconds(3600)), "1970-01");
}

TEST(BudgetPeriodStart, IsTheUtcMidnightThePeriodBegan) {
  // Monday 2026-11-23 (ISO week 48), Sunday 2026-11-29 ends it.
  EXPECT_EQ(BudgetPeriodStart(model::BudgetPeriod::kDaily, At(2026, 11, 23, 15, 30)), At(2026, 11, 23));
  EXPECT_EQ(BudgetPeriodStart(model::BudgetPeriod::kWeekly, At(2026, 11, 23, 15, 30)), At(2026, 11, 23));
  EXPECT_EQ(BudgetPeriodStart(model::BudgetPeriod::kWeekly, At(2026, 11, 29, 23, 59)), At(2026, 11, 23));
  EXPECT_EQ(BudgetPeriodStart(model::BudgetPeriod::kWeekly, At(2026, 11, 30)), At(2026, 11, 30));
  EXPECT_EQ(BudgetPeriodStart(model::BudgetPeriod::kMonthly, At(2026, 11, 30, 23, 59)), At(2026, 11, 1));
  EXPECT_EQ(BudgetPeriodStart(model::BudgetPeriod::kMonthly, At(2026, 12, 1)), At(2026, 12, 1));
  // A simulated run: the epoch was a Thursday, so its first week began in 1969.
  EXPECT_EQ(BudgetPeriodStart(model::BudgetPeriod::kMonthly, Duration::FromSeconds(3600)), Duration());
  EXPECT_EQ(BudgetPeriodStart(model::BudgetPeriod::kWeekly, Duration::FromSeconds(3600)), At(1969, 12, 29));
  // The week of 2026-12-01 began in November: the earliest start covers both.
  EXPECT_EQ(EarliestBudgetPeriodStart(At(2026, 12, 1, 12)), At(2026, 11, 30));
  EXPECT_EQ(EarliestBudgetPeriodStart(At(2026, 12, 10)), At(2026, 12, 1));
}

TEST(TenantSpend, DeclaredPlusMeteredThisPeriodPlusRunningEstimates) {
  model::Config config;
  config.tenants.push_back(Tenant("nlp", model::BudgetPeriod::kMonthly));
  config.tenants.back().budget.spent = Eur(5);
  config.tenants.back().budget.cloud_spent = Eur(1);
  SpendInputs in;
  in.now = At(2026, 11, 23, 12);
  in.metered = {
      {"nlp", Eur(7), Eur(0), At(2026, 10, 31, 23, 59)},  // October's: not this period
      {"nlp", Eur(10), Eur(0), At(2026, 11, 1)},          // the first instant of the period counts
      {"nlp", Eur(20), Eur(20), At(2026, 11, 20)},        // on a cloud cluster
  };
  in.estimates = {{"nlp", Eur(3), Eur(3)}, {"nlp", Eur(4), Money()}};
  std::vector<TenantSpend> spend = ComputeTenantSpend(config, in);
  ASSERT_EQ(spend.size(), 1u);
  const TenantSpend& s = spend[0];
  EXPECT_TRUE(s.declared);
  EXPECT_EQ(s.period_label, "2026-11");
  EXPECT_EQ(s.spent.ToString(), Eur(5 + 10 + 20 + 3 + 4).ToString());
  EXPECT_EQ(s.cloud_spent.ToString(), Eur(1 + 20 + 3).ToString());
  ASSERT_TRUE(s.used_ratio && s.cloud_used_ratio);
  EXPECT_DOUBLE_EQ(*s.used_ratio, 0.42);
  EXPECT_DOUBLE_EQ(*s.cloud_used_ratio, 0.6);
  // A new month starts over: only the running estimates and the declared seed remain.
  in.now = At(2026, 12, 1);
  spend = ComputeTenantSpend(config, in);
  EXPECT_EQ(spend[0].spent.ToString(), Eur(5 + 3 + 4).ToString());
  EXPECT_EQ(spend[0].cloud_spent.ToString(), Eur(1 + 3).ToString());
  EXPECT_EQ(spend[0].period_label, "2026-12");
}

// A EUR budget charged on a USD cluster: each charge is converted through the
// repository's rate; without a rate it is kept apart, never added as a plain number.
TEST(TenantSpend, ChargesInAnotherCurrencyAreConvertedOrKeptApart) {
  model::Config config;
  config.tenants.push_back(Tenant("nlp", model::BudgetPeriod::kMonthly));
  const Money usd(168'000'000, "USD");
  SpendInputs in;
  in.now = At(2026, 11, 23, 12);
  in.metered = {{"nlp", Eur(10), Money(), At(2026, 11, 2)}, {"nlp", usd, usd, At(2026, 11, 20)}};
  in.estimates = {{"nlp", usd, usd}};

  TenantSpend without = ComputeTenantSpend(config, in)[0];
  EXPECT_EQ(without.spent.ToString(), "10.00 EUR");
  EXPECT_EQ(without.cloud_spent.ToString(), "0.00 EUR");
  EXPECT_EQ(without.unconverted.ToDisplayString(), "336.00 USD");

  model::ExchangeRates rates;
  rates.metadata.name = "ecb";
  rates.as_of = "2026-11-02";
  rates.rates.push_back({"USD", "EUR", 920'000'000, {}});
  config.exchange_rates.push_back(rates);
  TenantSpend with = ComputeTenantSpend(config, in)[0];
  EXPECT_EQ(with.spent.ToString(), "319.12 EUR");  // 10 + 2 x 154.56
  EXPECT_EQ(with.cloud_spent.ToString(), "309.12 EUR");
  EXPECT_TRUE(with.unconverted.empty());
}

TEST(TenantSpend, EachTenantSumsItsOwnPeriod) {
  model::Config config;
  config.tenants.push_back(Tenant("daily", model::BudgetPeriod::kDaily));
  config.tenants.push_back(Tenant("weekly", model::BudgetPeriod::kWeekly));
  config.tenants.push_back(Tenant("monthly", model::BudgetPeriod::kMonthly));
  SpendInputs in;
  in.now = At(2026, 11, 25, 9);  // a Wednesday
  for (const std::string tenant : {"daily", "weekly", "monthly"}) {
    in.metered.push_back({tenant, Eur(1), Money(), At(2026, 11, 2)});      // this month
    in.metered.push_back({tenant, Eur(10), Money(), At(2026, 11, 23, 8)});  // this week (Monday)
    in.metered.push_back({tenant, Eur(100), Money(), At(2026, 11, 25, 1)});  // today
  }
  std::vector<TenantSpend> spend = ComputeTenantSpend(config, in);
  ASSERT_EQ(spend.size(), 3u);
  EXPECT_EQ(spend[0].spent.ToString(), Eur(100).ToString());
  EXPECT_EQ(spend[1].spent.ToString(), Eur(110).ToString());
  EXPECT_EQ(spend[2].spent.ToString(), Eur(111).ToString());
  EXPECT_EQ(spend[0].period_label, "2026-11-25");
  EXPECT_EQ(spend[1].period_label, "2026-W48");
}

TEST(TenantSpend, UndeclaredTenantsFollowByNameWithoutBudget) {
  model::Config config;
  config.tenants.push_back(Tenant("nlp", model::BudgetPeriod::kMonthly));
  config.tenants.back().budget.limit.reset();
  config.tenants.back().budget.cloud_limit = Money(0, "EUR");
  SpendInputs in;
  in.now = At(2026, 11, 2);
  in.estimates = {{"zeta", Eur(2), Money()}, {"alpha", Eur(1), Eur(1)}, {"nlp", Eur(1), Money()}};
  std::vector<TenantSpend> spend = ComputeTenantSpend(config, in);
  ASSERT_EQ(spend.size(), 3u);
  EXPECT_EQ(spend[0].tenant, "nlp");
  EXPECT_FALSE(spend[0].used_ratio);        // no limit
  EXPECT_FALSE(spend[0].cloud_used_ratio);  // a zero limit is none
  EXPECT_EQ(spend[1].tenant, "alpha");
  EXPECT_FALSE(spend[1].declared);
  EXPECT_EQ(spend[1].cloud_spent.ToString(), Eur(1).ToString());
  EXPECT_EQ(spend[2].tenant, "zeta");
  std::map<std::string, TenantUsage> usage;
  usage["nlp"].decayed_gpu_hours = 3;
  AddSpendToUsage(spend, usage);
  EXPECT_EQ(usage.size(), 3u);
  EXPECT_EQ(usage["nlp"].spent.ToString(), Eur(1).ToString());
  EXPECT_EQ(usage["nlp"].decayed_gpu_hours, 3);  // only the spend is set
}

}  // namespace
}  // namespace gpufed::placement
