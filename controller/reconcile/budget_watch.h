#pragma once
// Tenants' spend against their budgets while the controller runs (the spend function of
// placement/tenant_spend.h over the store's metered days and active estimates: what the
// placer counts). Each alertAt
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
#include "controller/placement/tenant_spend.h"
#include "controller/store/store.h"

namespace gpufed::reconcile {

// A tenant's spend (placement/tenant_spend.h: the one definition) and the alerts
// reported for it this period.
struct TenantBudgetStatus : placement::TenantSpend {
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

// Metered cost booked since the earliest budget period holding `now` began, as the
// spend function takes it (it keeps each tenant's own period of it).
Result<std::vector<placement::MeteredSpend>> MeteredThisPeriod(store::Store& from, Duration now);

class BudgetWatch {
 public:
  explicit BudgetWatch(store::Store* store) : store_(store) {}  // must outlive this

  // Every declared tenant's spend now.
  Result<std::vector<TenantBudgetStatus>> Spend(const model::Config& config, Duration now);
  // Levels reached and not yet remembered for this period.
  Result<std::vector<BudgetCrossing>> NewCrossings(const model::Config& config, Duration now);
  // Marks a crossing reported (after the journal holds it: a crash in between reports it
  // again rather than never).
  Status Remember(const BudgetCrossing& crossing, Duration now);

 private:
  // Spend without the alerts already reported (ReportedAlerts adds them).
  Result<std::vector<TenantBudgetStatus>> Totals(const model::Config& config, Duration now);
  Status ReportedAlerts(TenantBudgetStatus& spend);

  store::Store* store_;
};

}  // namespace gpufed::reconcile
