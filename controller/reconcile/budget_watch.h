#pragma once
// Tenants' spend against their budgets while the controller runs: metered cost plus the
// estimates of running attempts (what the placer counts), per budget period. Each alertAt
// level a tenant's spend reaches is reported once per level, scope and period, durably
// (the store remembers which were reported, so a restart or an estimate replaced by a
// lower metered cost never reports a level twice).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/model/config.h"
#include "controller/store/store.h"

namespace gpufed::reconcile {

struct TenantSpend {
  std::string tenant;
  std::string period;          // "monthly" ...
  std::string period_label;    // the current period: "2026-11", "2026-W48", "2026-11-23"
  Money spent;                 // metered + running estimates (+ declared spent)
  Money cloud_spent;
  std::optional<Money> limit;
  std::optional<Money> cloud_limit;
  std::vector<double> alert_at;
  nlohmann::json alerts = nlohmann::json::array();  // reported this period
};

// A level reached for the first time in its period.
struct BudgetCrossing {
  std::string tenant;
  std::string period_label;
  std::string scope;  // "all" or "cloud"
  double level = 0;
  Money spent;
  Money limit;
  std::string message;
};

// The label of the budget period `now` (Unix epoch time; virtual runs count from 1970)
// falls in: daily "YYYY-MM-DD", weekly ISO "YYYY-Www", monthly "YYYY-MM".
std::string BudgetPeriodLabel(model::BudgetPeriod period, Duration now);

class BudgetWatch {
 public:
  explicit BudgetWatch(store::Store* store) : store_(store) {}  // must outlive this

  // Every declared tenant's spend now.
  Result<std::vector<TenantSpend>> Spend(const model::Config& config, Duration now);
  // Levels reached and not yet remembered for this period.
  Result<std::vector<BudgetCrossing>> NewCrossings(const model::Config& config, Duration now);
  // Marks a crossing reported (after the journal holds it: a crash in between reports it
  // again rather than never).
  Status Remember(const BudgetCrossing& crossing, Duration now);

 private:
  // Spend without the alerts already reported (ReportedAlerts adds them).
  Result<std::vector<TenantSpend>> Totals(const model::Config& config, Duration now);
  Status ReportedAlerts(TenantSpend& spend);

  store::Store* store_;
};

}  // namespace gpufed::reconcile
