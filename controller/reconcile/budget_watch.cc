#include "controller/reconcile/budget_watch.h"

#include <cstdio>
#include <ctime>
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
  return limit && limit->micros() > 0 && static_cast<double>(spent.micros()) >= static_cast<double>(limit->micros()) * level;
}

}  // namespace

std::string BudgetPeriodLabel(model::BudgetPeriod period, Duration now) {
  constexpr int64_t kDaySeconds = 86400;
  const int64_t seconds = now.millis() >= 0 ? now.millis() / 1000 : (now.millis() - 999) / 1000;
  auto utc = [](int64_t s) {
    std::tm tm{};
    const std::time_t t = static_cast<std::time_t>(s);
    gmtime_r(&t, &tm);
    return tm;
  };
  const std::tm day = utc(seconds);
  char text[32];
  switch (period) {
    case model::BudgetPeriod::kDaily:
      std::snprintf(text, sizeof text, "%04d-%02d-%02d", day.tm_year + 1900, day.tm_mon + 1, day.tm_mday);
      break;
    case model::BudgetPeriod::kWeekly: {
      // ISO 8601: a week belongs to the year of its Thursday, and week 1 holds the
      // year's first Thursday.
      const int iso_weekday = day.tm_wday == 0 ? 7 : day.tm_wday;  // Monday 1 .. Sunday 7
      const std::tm thursday = utc(seconds + (4 - iso_weekday) * kDaySeconds);
      std::snprintf(text, sizeof text, "%04d-W%02d", thursday.tm_year + 1900, thursday.tm_yday / 7 + 1);
      break;
    }
    case model::BudgetPeriod::kMonthly:
      std::snprintf(text, sizeof text, "%04d-%02d", day.tm_year + 1900, day.tm_mon + 1);
      break;
  }
  return text;
}

Result<std::vector<TenantSpend>> BudgetWatch::Spend(const model::Config& config, Duration now) {
  Result<std::vector<TenantSpend>> out = Totals(config, now);
  if (!out.ok()) return out.status();
  for (TenantSpend& s : *out) GPUFED_RETURN_IF_ERROR(ReportedAlerts(s));
  return out;
}

Status BudgetWatch::ReportedAlerts(TenantSpend& s) {
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

Result<std::vector<TenantSpend>> BudgetWatch::Totals(const model::Config& config, Duration now) {
  Result<std::map<std::string, store::UsageRow>> metered = store_->Usage();
  if (!metered.ok()) return metered.status();
  Result<std::map<std::string, store::ActiveEstimate>> running = store_->ActiveEstimates();
  if (!running.ok()) return running.status();
  std::vector<TenantSpend> out;
  for (const model::Tenant& t : config.tenants) {
    TenantSpend s;
    s.tenant = t.metadata.name;
    s.period = model::BudgetPeriodName(t.budget.period);
    s.period_label = BudgetPeriodLabel(t.budget.period, now);
    s.spent = t.budget.spent;
    s.cloud_spent = t.budget.cloud_spent;
    if (auto it = metered->find(s.tenant); it != metered->end()) {
      s.spent = s.spent.Plus(it->second.spent);
      s.cloud_spent = s.cloud_spent.Plus(it->second.cloud_spent);
    }
    if (auto it = running->find(s.tenant); it != running->end()) {
      s.spent = s.spent.Plus(it->second.all);
      s.cloud_spent = s.cloud_spent.Plus(it->second.cloud);
    }
    s.limit = t.budget.limit;
    s.cloud_limit = t.budget.cloud_limit;
    s.alert_at = t.budget.alert_at;
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<BudgetCrossing>> BudgetWatch::NewCrossings(const model::Config& config, Duration now) {
  Result<std::vector<TenantSpend>> spend = Totals(config, now);
  if (!spend.ok()) return spend.status();
  std::vector<BudgetCrossing> out;
  for (TenantSpend& s : *spend) {
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
        c.message = "tenant " + s.tenant + " reached " + Percent(level) + " of its " + (scope == "cloud" ? "cloud " : "") +
                    s.period + " budget: " + spent.ToString() + " of " + limit->ToString() + " (" + s.period_label + ")";
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
  all.push_back({{"period", c.period_label}, {"scope", c.scope}, {"level", c.level}, {"spent", c.spent.ToString()},
                 {"limit", c.limit.ToString()}, {"atMillis", now.millis()}});
  return store_->SetMeta(kAlertsKey + c.tenant, all.dump());
}

}  // namespace gpufed::reconcile
