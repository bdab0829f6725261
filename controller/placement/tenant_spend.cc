#include "controller/placement/tenant_spend.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace gpufed::placement {
namespace {

constexpr int64_t kDaySeconds = 86400;

int64_t FloorSeconds(Duration now) { return now.millis() >= 0 ? now.millis() / 1000 : (now.millis() - 999) / 1000; }

std::tm Utc(int64_t seconds) {
  std::tm tm{};
  const auto t = static_cast<std::time_t>(seconds);
  gmtime_r(&t, &tm);
  return tm;
}

int64_t FloorDay(int64_t seconds) {
  return seconds >= 0 ? seconds / kDaySeconds : (seconds - kDaySeconds + 1) / kDaySeconds;
}

// Monday 1 .. Sunday 7 (ISO 8601).
int IsoWeekday(const std::tm& day) { return day.tm_wday == 0 ? 7 : day.tm_wday; }

TenantSpend& EntryFor(const std::string& tenant, std::vector<TenantSpend>& out, std::map<std::string, size_t>& at) {
  auto [it, added] = at.try_emplace(tenant, out.size());
  if (added) {
    TenantSpend& s = out.emplace_back();
    s.tenant = tenant;
  }
  return out[it->second];
}

}  // namespace

Duration BudgetPeriodStart(model::BudgetPeriod period, Duration now) {
  const int64_t day = FloorDay(FloorSeconds(now));
  const std::tm tm = Utc(day * kDaySeconds);
  int64_t start_day = day;
  switch (period) {
    case model::BudgetPeriod::kDaily: break;
    case model::BudgetPeriod::kWeekly: start_day = day - (IsoWeekday(tm) - 1); break;
    case model::BudgetPeriod::kMonthly: start_day = day - (tm.tm_mday - 1); break;
  }
  return Duration::FromSeconds(start_day * kDaySeconds);
}

Duration EarliestBudgetPeriodStart(Duration now) {
  return std::min(BudgetPeriodStart(model::BudgetPeriod::kWeekly, now),
                  BudgetPeriodStart(model::BudgetPeriod::kMonthly, now));
}

std::string BudgetPeriodLabel(model::BudgetPeriod period, Duration now) {
  const int64_t seconds = FloorSeconds(now);
  const std::tm day = Utc(seconds);
  char text[32];
  switch (period) {
    case model::BudgetPeriod::kDaily:
      std::snprintf(text, sizeof text, "%04d-%02d-%02d", day.tm_year + 1900, day.tm_mon + 1, day.tm_mday);
      break;
    case model::BudgetPeriod::kWeekly: {
      // A week belongs to the year of its Thursday, and week 1 holds the year's first Thursday.
      const std::tm thursday = Utc(seconds + (4 - IsoWeekday(day)) * kDaySeconds);
      std::snprintf(text, sizeof text, "%04d-W%02d", thursday.tm_year + 1900, thursday.tm_yday / 7 + 1);
      break;
    }
    case model::BudgetPeriod::kMonthly:
      std::snprintf(text, sizeof text, "%04d-%02d", day.tm_year + 1900, day.tm_mon + 1);
      break;
  }
  return text;
}

std::optional<double> UsedRatio(const Money& spent, const std::optional<Money>& limit) {
  if (!limit || limit->micros() <= 0) return std::nullopt;
  return static_cast<double>(spent.micros()) / static_cast<double>(limit->micros());
}

namespace {

// `amount` into `total`, converted into total's currency ("" until the first charge).
void AddCharge(const model::CurrencyConverter& rates, const Money& amount, Money& total, MoneyTotals& unconverted) {
  if (amount.is_zero()) return;  // nothing to convert, whatever its currency
  Result<Money> converted = rates.Convert(amount, total.currency());
  Result<Money> sum = converted.ok() ? total.Plus(*converted) : Result<Money>(converted.status());
  if (sum.ok()) {
    total = *sum;
  } else {
    unconverted.Add(amount);
  }
}

}  // namespace

std::vector<TenantSpend> ComputeTenantSpend(const model::Config& config, const SpendInputs& in) {
  const model::CurrencyConverter rates = config.Converter();
  std::vector<TenantSpend> out;
  std::map<std::string, size_t> at;  // tenant -> index in `out`
  for (const model::Tenant& t : config.tenants) {
    TenantSpend& s = EntryFor(t.metadata.name, out, at);
    s.declared = true;
    s.period = t.budget.period;
    s.spent = Money(0, t.budget.Currency());
    s.cloud_spent = Money(0, t.budget.Currency());
    AddCharge(rates, t.budget.spent, s.spent, s.unconverted);
    AddCharge(rates, t.budget.cloud_spent, s.cloud_spent, s.unconverted);
    s.limit = t.budget.limit;
    s.cloud_limit = t.budget.cloud_limit;
    s.alert_at = t.budget.alert_at;
  }
  // Tenants only the charges name come after the declared ones, by name.
  std::vector<std::string> others;
  auto note = [&](const std::string& tenant) {
    if (at.count(tenant) == 0 && std::find(others.begin(), others.end(), tenant) == others.end())
      others.push_back(tenant);
  };
  for (const MeteredSpend& m : in.metered) note(m.tenant);
  for (const EstimatedSpend& e : in.estimates) note(e.tenant);
  std::sort(others.begin(), others.end());
  for (const std::string& tenant : others) EntryFor(tenant, out, at);

  auto charge = [&](TenantSpend& s, const Money& cost, const Money& cloud_cost) {
    AddCharge(rates, cost, s.spent, s.unconverted);
    // The cloud part is in the same currency as the whole, and within it: an amount that
    // does not convert is already in `unconverted`.
    if (s.cloud_spent.currency().empty()) s.cloud_spent = Money(s.cloud_spent.micros(), s.spent.currency());
    MoneyTotals within_whole;
    AddCharge(rates, cloud_cost, s.cloud_spent, within_whole);
  };
  for (const MeteredSpend& m : in.metered) {
    TenantSpend& s = out[at.at(m.tenant)];
    // Booked before the period began: an earlier period's spend. (Booked after `now`, by
    // a wall clock set back since, it was spent all the same: it counts.)
    if (m.at < BudgetPeriodStart(s.period, in.now)) continue;
    charge(s, m.cost, m.cloud_cost);
  }
  for (const EstimatedSpend& e : in.estimates) {
    TenantSpend& s = out[at.at(e.tenant)];
    charge(s, e.cost, e.cloud_cost);
  }
  for (TenantSpend& s : out) {
    s.period_label = BudgetPeriodLabel(s.period, in.now);
    s.used_ratio = UsedRatio(s.spent, s.limit);
    s.cloud_used_ratio = UsedRatio(s.cloud_spent, s.cloud_limit);
  }
  return out;
}

void AddSpendToUsage(const std::vector<TenantSpend>& spend, std::map<std::string, TenantUsage>& usage) {
  for (const TenantSpend& s : spend) {
    TenantUsage& u = usage[s.tenant];
    u.spent = s.spent;
    u.cloud_spent = s.cloud_spent;
  }
}

}  // namespace gpufed::placement
