// ExchangeRates: the repository's exchange rates (model/exchange_rates.h), and the check
// that every pair of currencies the repository compares or sums has one.
#include <algorithm>
#include <regex>
#include <set>

#include "controller/config/decoders.h"

namespace gpufed::config {
namespace {

bool IsCurrencyCode(const std::string& code) {
  static const std::regex kCurrency("[A-Z]{3}");
  return std::regex_match(code, kCurrency);
}

// "2026-11-02": a calendar day (asOf says when the rates held; it is recorded, not
// compared with the clock).
bool IsCalendarDate(const std::string& text) {
  static const std::regex kDate("([0-9]{4})-([0-9]{2})-([0-9]{2})");
  std::smatch m;
  if (!std::regex_match(text, m, kDate)) return false;
  const int year = std::stoi(m[1]), month = std::stoi(m[2]), day = std::stoi(m[3]);
  constexpr int kDays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || day > kDays[month - 1]) return false;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month != 2 || day <= 28 || leap;
}

std::string Where(const model::SourceLocation& at) { return at.file + ":" + std::to_string(at.line); }

}  // namespace

void DecodeExchangeRatesSpec(const YamlField& spec, model::ExchangeRates& out) {
  if (!spec.ExpectObject({"asOf", "rates"}, Required::kYes)) return;
  YamlField as_of = spec.Child("asOf");
  if (auto v = as_of.String(Required::kYes)) {
    if (IsCalendarDate(*v)) {
      out.as_of = *v;
    } else {
      as_of.Error("asOf '" + *v + "' is not a date YYYY-MM-DD (the day the rates are valid for)");
    }
  }
  std::set<std::string> pairs;  // "A/B" with A < B: a pair is declared once, either way
  for (const YamlField& entry : spec.Child("rates").Elements(Required::kYes)) {
    if (!entry.ExpectObject({"from", "to", "rate"}, Required::kYes)) continue;
    model::ExchangeRate rate;
    rate.location = entry.location();
    for (auto [key, dest] : {std::pair{"from", &rate.from}, std::pair{"to", &rate.to}}) {
      YamlField code = entry.Child(key);
      if (auto v = code.String(Required::kYes)) {
        if (IsCurrencyCode(*v)) {
          *dest = *v;
        } else {
          code.Error("currency must be a three-letter code such as EUR");
        }
      }
    }
    YamlField value = entry.Child("rate");
    // The text as written, quoted or not: a YAML float would round it.
    if (!value.defined()) {
      value.Error("missing required field");
    } else if (!value.node().IsScalar()) {
      value.Error("expected a decimal rate such as \"0.92\"");
    } else {
      Result<int64_t> nanos = model::ParseRateNanos(value.node().Scalar());
      if (nanos.ok()) {
        rate.nanos = *nanos;
      } else {
        value.Error(nanos.status().message());
      }
    }
    if (rate.from.empty() || rate.to.empty() || rate.nanos == 0) continue;
    if (rate.from == rate.to) {
      entry.Child("to").Error("a rate converts between two currencies; from and to are both " + rate.from);
      continue;
    }
    const std::string pair = std::min(rate.from, rate.to) + "/" + std::max(rate.from, rate.to);
    if (!pairs.insert(pair).second) {
      entry.Error("the pair " + pair + " has a rate already (one rate per pair; it converts both ways)");
      continue;
    }
    out.rates.push_back(std::move(rate));
  }
}

namespace {

// A place that prices, limits or caps money, with its currency. A context's places are
// only ever compared with, never named in a message (CheckCurrencies).
struct Place {
  std::string currency;
  model::SourceLocation at;
  std::string field;
  std::string what;
  bool in_context = false;  // of the repository a submission is checked against
};

// Every place of `config`, in a stable order: what money is compared with first (budgets,
// maxCosts, price caps), then the prices, so a cluster in another currency is reported
// naming the budget or cap it meets. Of a context only each currency's first place is
// kept (CheckCurrencies reads no other), and the rest are skipped before their text is
// built: checking a submission costs the same whatever the repository's size.
void AddPlaces(const model::Config& config, bool in_context, std::vector<Place>& places) {
  std::vector<std::string> context_currencies;
  const auto add = [&](const std::string& currency, const model::SourceLocation& at, const char* field,
                       const auto& what) {
    if (in_context) {
      if (std::find(context_currencies.begin(), context_currencies.end(), currency) != context_currencies.end()) {
        return;
      }
      context_currencies.push_back(currency);
    }
    places.push_back({currency, at, field, what(), in_context});
  };
  for (const model::Tenant& t : config.tenants) {
    if (t.budget.currency.empty()) continue;
    add(t.budget.currency, t.budget.currency_location, "spec.budget",
        [&] { return "tenant " + t.metadata.name + "'s budget is in " + t.budget.currency; });
  }
  const auto workload = [&](const model::Workload& w, const auto& name) {
    if (!w.max_cost || w.max_cost->currency().empty()) return;
    add(w.max_cost->currency(), w.max_cost_location, "spec.maxCost",
        [&] { return name() + "'s maxCost is in " + w.max_cost->currency(); });
  };
  for (const model::Workload& w : config.workloads) {
    workload(w, [&] { return "workload " + w.metadata.name; });
  }
  // stdlib/cost-caps' ceilings, when they name their currency (else each cluster's own).
  for (const model::Policy& p : config.policies) {
    auto currency = p.params.find("currency");
    if (p.import != "stdlib/cost-caps" || currency == p.params.end() || !currency->is_string() ||
        currency->get<std::string>().empty()) {
      continue;
    }
    const std::string code = currency->get<std::string>();
    if (!IsCurrencyCode(code)) continue;  // the parameter's type check reports it (param_check.h)
    auto written = p.param_locations.find("/currency");
    add(code, written != p.param_locations.end() ? written->second : p.metadata.location, "spec.params.currency",
        [&] { return "policy " + p.metadata.name + "'s price caps are in " + code; });
  }
  for (const model::PolicyTest& t : config.policy_tests) {
    for (const model::PolicyTestCase& c : t.cases) {
      workload(c.workload, [&] { return "test case '" + c.name + "'"; });
    }
  }
  for (const model::Cluster& c : config.clusters) {
    if (c.pricing.currency.empty()) continue;
    add(c.pricing.currency, c.pricing.currency_location, "spec.pricing.currency",
        [&] { return "cluster " + c.metadata.name + " prices in " + c.pricing.currency; });
  }
}

}  // namespace

void CheckCurrencies(const model::Config& config, const model::Config* context, Diagnostics& diagnostics) {
  for (size_t i = 1; i < config.exchange_rates.size(); ++i) {
    const model::SourceLocation& at = config.exchange_rates[i].metadata.location;
    diagnostics.Add({at.file, at.line, at.column, "kind",
                     "a repository has one ExchangeRates resource; another is at " +
                         Where(config.exchange_rates.front().metadata.location)});
  }
  std::vector<Place> places;
  if (context != nullptr) AddPlaces(*context, true, places);
  AddPlaces(config, false, places);
  // Each pair of currencies without a rate is reported once, at the later place, naming
  // the first place of the other currency (a submission's places come after its context's).
  const model::CurrencyConverter rates =
      config.exchange_rates.empty() && context != nullptr ? context->Converter() : config.Converter();
  std::map<std::string, const Place*> first;  // currency -> where it first appears
  std::set<std::string> reported;
  for (const Place& p : places) {
    for (const auto& [currency, other] : first) {
      if (p.in_context || currency == p.currency || rates.CanConvert(p.currency, currency)) continue;
      if (!reported.insert(std::min(currency, p.currency) + "/" + std::max(currency, p.currency)).second) continue;
      // A place of the context is not named: a submission's author (a tenant's token) is
      // told the repository's currency, not which tenant, workload, policy or line of the
      // repository holds it.
      std::string message = p.what + ", but ";
      if (other->in_context) {
        message += "the repository it is checked against has money in " + currency;
      } else {
        message += other->what + " (" + Where(other->at) + ")";
      }
      message += " and no ExchangeRates resource converts " + currency + " and " + p.currency;
      message += ": declare a rate for the pair";
      diagnostics.Add({p.at.file, p.at.line, p.at.column, p.field, std::move(message)});
    }
    first.emplace(p.currency, &p);
  }
}

}  // namespace gpufed::config
