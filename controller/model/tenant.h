#pragma once
// A Tenant: a team with a fair-share weight, a GPU quota and a spending budget.
#include <optional>
#include <string>
#include <vector>

#include "controller/common/money.h"
#include "controller/model/meta.h"

namespace gpufed::model {

enum class BudgetPeriod { kDaily, kWeekly, kMonthly };
const char* BudgetPeriodName(BudgetPeriod period);

struct Budget {
  BudgetPeriod period = BudgetPeriod::kMonthly;
  std::optional<Money> limit;        // all spending in the period
  std::optional<Money> cloud_limit;  // spending on non-onprem clusters
  std::vector<double> alert_at;      // fractions of the limit
  Money spent;                       // already spent this period (seeded by the store later)
  Money cloud_spent;
  // The budget's currency (every amount of it has one) and where it is written; spend is
  // summed and compared in it, through the repository's exchange rates.
  std::string currency;
  SourceLocation currency_location;

  // `currency`, else its limits' (a Budget built in code rather than decoded).
  const std::string& Currency() const {
    if (!currency.empty()) return currency;
    if (limit) return limit->currency();
    return cloud_limit ? cloud_limit->currency() : currency;
  }
};

struct Tenant {
  ObjectMeta metadata;
  double weight = 1;
  int guaranteed_gpus = 0;
  std::optional<int> max_gpus;
  Budget budget;
  // The highest priority its tokens may submit through the API (admins and the
  // repository are not capped). As written: a number, or a class resolved after loading.
  std::optional<int> max_priority;
  std::string max_priority_class;
  // API requests its tokens may make (spec.api; admins are exempt). Unset, a tenant gets
  // the defaults below, so one tenant's token cannot take the API from the others; "0"
  // lifts a limit explicitly.
  static constexpr double kDefaultApiRatePerSecond = 50;
  static constexpr int kDefaultApiBurst = 100;
  static constexpr int kDefaultApiMaxConcurrentRequests = 16;
  double api_rate_per_second = kDefaultApiRatePerSecond;  // rateLimit "20/s"; 0: unlimited
  int api_burst = kDefaultApiBurst;  // 0: the rate rounded up (at least 1)
  int api_max_concurrent_requests = kDefaultApiMaxConcurrentRequests;  // in flight at once; 0: unlimited
};

}  // namespace gpufed::model
