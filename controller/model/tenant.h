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
  // API requests its tokens may make (spec.api.rateLimit "20/s", burst); admins are exempt.
  double api_rate_per_second = 0;  // 0: unlimited
  int api_burst = 0;               // 0: the rate rounded up (at least 1)
};

}  // namespace gpufed::model
