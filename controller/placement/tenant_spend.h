#pragma once
// Tenant spend: the one definition of what a tenant has spent in its budget period, for
// the placer's budgets (every snapshot), the budget alerts, the API's and dashboard's
// tenant views and /metrics. A pure function of explicit inputs:
//
//   spent       = the Tenant's declared `spent` (spend gpufed did not see: a seed)
//               + metered cost booked in the current period (from its start on)
//               + the estimates of the tenant's active attempts (they are metered, and
//                 their estimate dropped, when they finish)
//   cloud_spent = the same, counting only what ran on clusters whose provider is not
//                 onprem (the Tenant's declared `cloudSpent` as its seed)
//
// A budget period is a UTC day, an ISO week (from Monday 00:00 UTC) or a calendar month,
// in the controller's clock (Unix epoch time; a simulated run's virtual time counts from
// 1970-01-01). An attempt's metered cost belongs to the period in which it was booked
// (it finished), however long it ran: metering happens then. A running attempt's
// estimate counts in the current period.
//
// Spend is summed in one currency: the budget's (Tenant.spec.budget), or for a tenant
// without one the currency of its first charge. A charge in another currency is
// converted through the repository's exchange rates (model/exchange_rates.h); one no
// rate converts (validate refuses such a repository, but a store may hold charges of an
// older revision) is kept apart in `unconverted`, never added as a plain number.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/model/config.h"
#include "controller/placement/plan.h"

namespace gpufed::placement {

// When the budget period holding `now` began (UTC).
Duration BudgetPeriodStart(model::BudgetPeriod period, Duration now);
// The earliest start of any kind of period holding `now`: metered cost booked before it
// is in no tenant's current period (a week may begin in the previous month).
Duration EarliestBudgetPeriodStart(Duration now);
// The period's label: daily "YYYY-MM-DD", weekly ISO "YYYY-Www", monthly "YYYY-MM".
std::string BudgetPeriodLabel(model::BudgetPeriod period, Duration now);

// Metered cost one tenant was charged at `at` (a finished attempt, or a store's sum of
// such attempts over a span that lies within one UTC day); `cloud_cost` is the part on
// cloud clusters.
struct MeteredSpend {
  std::string tenant;
  Money cost;
  Money cloud_cost;
  Duration at;
};
// What a tenant's active attempts (or one of them) are estimated to cost.
struct EstimatedSpend {
  std::string tenant;
  Money cost;
  Money cloud_cost;
};

struct SpendInputs {
  Duration now;
  std::vector<MeteredSpend> metered;
  std::vector<EstimatedSpend> estimates;
};

struct TenantSpend {
  std::string tenant;
  bool declared = false;  // a Tenant of the config (else only charges name it: no budget)
  model::BudgetPeriod period = model::BudgetPeriod::kMonthly;
  std::string period_label;
  Money spent;        // in `currency`
  Money cloud_spent;  // in `currency`
  MoneyTotals unconverted;  // charges no exchange rate converts into `currency`
  std::optional<Money> limit;
  std::optional<Money> cloud_limit;
  std::vector<double> alert_at;
  std::optional<double> used_ratio;        // spent / limit (none without a limit above zero)
  std::optional<double> cloud_used_ratio;  // cloud_spent / cloud_limit
};

// spent / limit; none without a limit above zero.
std::optional<double> UsedRatio(const Money& spent, const std::optional<Money>& limit);

// Every declared tenant in declaration order, then every other tenant the inputs charge,
// by name (monthly, no limits).
std::vector<TenantSpend> ComputeTenantSpend(const model::Config& config, const SpendInputs& inputs);

// Each tenant's spend into the placer's usage (spent, cloud_spent), creating entries.
void AddSpendToUsage(const std::vector<TenantSpend>& spend, std::map<std::string, TenantUsage>& usage);

}  // namespace gpufed::placement
