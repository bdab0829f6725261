#include "controller/reconcile/budget_watch.h"

#include <cstdio>
#include <map>

namespace gpufed::reconcile {
namespace {

constexpr const char* kAlertsKey = "budget_alerts:";  // + tenant: JSON array of reported levels

std::string Percent(double level) {
  char text[16];
  std::snprintf(text, sizeof text, "%g%%", level * 100);
  return text;
}

// Whether `spent` reached `level` of `limit` (no limit, or none above zero: never).
bool Reached(const std::optional<Money>& limit, const Money& spent, double level) {
  return limit && limit->micros() > 0 &&
         static_cast<double>(spent.micros()) >= static_cast<double>(limit->micros()) * level;
}

}  // namespace

Result<std::vector<placement::MeteredSpend>> MeteredThisPeriod(store::Store& from, Duration now) {
  Result<std::vector<store::MeteredDayRow>> days = from.MeteredDays(placement::EarliestBudgetPeriodStart(now));
  if (!days.ok()) return days.status();
  std::vector<placement::MeteredSpend> out;
  out.reserve(days->size());
  for (store::MeteredDayRow& d : *days) out.push_back({std::move(d.tenant), d.spent, d.cloud_spent, d.day});
  return out;
}

Result<std::vector<TenantBudgetStatus>> BudgetWatch::Spend(const model::Config& config, Duration now) {
  Result<std::vector<TenantBudgetStatus>> out = Totals(config, now);
  if (!out.ok()) return out.status();
  for (TenantBudgetStatus& s : *out) GPUFED_RETURN_IF_ERROR(ReportedAlerts(s));
  return out;
}

Status BudgetWatch::ReportedAlerts(TenantBudgetStatus& s) {
  Result<std::optional<std::string>> reported = store_->GetMeta(kAlertsKey + s.tenant);
  if (!reported.ok()) return reported.status();
  if (!*reported) return Status::Ok();
  nlohmann::json all = nlohmann::json::parse(**reported, nullptr, false);
  if (!all.is_array()) return Status::Ok();
  for (const nlohmann::json& a : all) {
    if (a.is_object() && a.value("period", "") == s.period_label) s.alerts.push_back(a);
  }
  return Status::Ok();
}

Result<std::vector<TenantBudgetStatus>> BudgetWatch::Totals(const model::Config& config, Duration now) {
  placement::SpendInputs inputs;
  inputs.now = now;
  Result<std::vector<placement::MeteredSpend>> metered = MeteredThisPeriod(*store_, now);
  if (!metered.ok()) return metered.status();
  inputs.metered = std::move(*metered);
  Result<std::map<std::string, store::ActiveEstimate>> running = store_->ActiveEstimates();
  if (!running.ok()) return running.status();
  for (const auto& [tenant, estimate] : *running) {
    inputs.estimates.push_back({tenant, estimate.all, estimate.cloud});
    // Estimates in other currencies: ComputeTenantSpend converts each.
    for (const auto& [currency, amount] : estimate.other_all.by_currency()) {
      auto cloud = estimate.other_cloud.by_currency().find(currency);
      inputs.estimates.push_back(
          {tenant, amount, cloud == estimate.other_cloud.by_currency().end() ? Money(0, currency) : cloud->second});
    }
  }
  std::vector<TenantBudgetStatus> out;
  for (placement::TenantSpend& spend : placement::ComputeTenantSpend(config, inputs)) {
    if (!spend.declared) continue;  // no budget to watch
    TenantBudgetStatus& s = out.emplace_back();
    static_cast<placement::TenantSpend&>(s) = std::move(spend);
  }
  return out;
}

Result<std::vector<BudgetCrossing>> BudgetWatch::NewCrossings(const model::Config& config, Duration now) {
  Result<std::vector<TenantBudgetStatus>> spend = Totals(config, now);
  if (!spend.ok()) return spend.status();
  std::vector<BudgetCrossing> out;
  for (TenantBudgetStatus& s : *spend) {
    if (s.alert_at.empty()) continue;
    // The reported alerts are read (a store read and a JSON parse) only for a tenant past
    // a level: every pass asks, and most tenants are below every level most of the time.
    bool past_a_level = false;
    for (double level : s.alert_at) {
      past_a_level = past_a_level || Reached(s.limit, s.spent, level) || Reached(s.cloud_limit, s.cloud_spent, level);
    }
    if (!past_a_level) continue;
    GPUFED_RETURN_IF_ERROR(ReportedAlerts(s));
    auto reported = [&](const std::string& scope, double level) {
      for (const nlohmann::json& a : s.alerts) {
        if (a.value("scope", "") == scope && a.value("level", -1.0) == level) return true;
      }
      return false;
    };
    std::vector<BudgetCrossing> fresh;
    auto check = [&](const std::optional<Money>& limit, const Money& spent, const std::string& scope) {
      for (double level : s.alert_at) {
        if (!Reached(limit, spent, level) || reported(scope, level)) continue;
        BudgetCrossing c{s.tenant, s.period_label, scope, level, spent, *limit, ""};
        c.message = "tenant " + s.tenant + " reached " + Percent(level) + " of its " +
                    (scope == "cloud" ? "cloud " : "") + model::BudgetPeriodName(s.period) +
                    " budget: " + spent.ToString() + " of " + limit->ToString() + " (" + s.period_label + ")";
        fresh.push_back(std::move(c));
      }
    };
    check(s.limit, s.spent, "all");
    check(s.cloud_limit, s.cloud_spent, "cloud");
    out.insert(out.end(), fresh.begin(), fresh.end());
  }
  return out;
}

Status BudgetWatch::Remember(const BudgetCrossing& c, Duration now) {
  Result<std::optional<std::string>> stored = store_->GetMeta(kAlertsKey + c.tenant);
  if (!stored.ok()) return stored.status();
  nlohmann::json all = *stored ? nlohmann::json::parse(**stored, nullptr, false) : nlohmann::json::array();
  if (!all.is_array()) all = nlohmann::json::array();
  all.push_back({{"period", c.period_label},
                 {"scope", c.scope},
                 {"level", c.level},
                 {"spent", c.spent.ToString()},
                 {"limit", c.limit.ToString()},
                 {"atMillis", now.millis()}});
  return store_->SetMeta(kAlertsKey + c.tenant, all.dump());
}

}  // namespace gpufed::reconcile
