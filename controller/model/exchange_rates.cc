#include "controller/model/exchange_rates.h"

namespace gpufed::model {
namespace {

std::string PairKey(std::string_view from, std::string_view to) {
  std::string key(from);
  key += '>';
  key += to;
  return key;
}

}  // namespace

Result<int64_t> ParseRateNanos(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("rate '" + std::string(text) + "' " + why +
                           " (an exact decimal above 0 with at most 9 decimals, such as \"0.92\")");
  };
  constexpr int64_t kMaxUnits = 1000000000;
  int64_t units = 0, fraction = 0;
  int fraction_digits = 0;
  bool digits = false, in_fraction = false;
  for (char ch : text) {
    if (ch == '.' && !in_fraction) {
      in_fraction = true;
      continue;
    }
    if (ch < '0' || ch > '9') return bad("is not a decimal number");
    digits = true;
    if (in_fraction) {
      if (++fraction_digits > 9) return bad("has more than 9 decimals");
      fraction = fraction * 10 + (ch - '0');
    } else {
      units = units * 10 + (ch - '0');
      if (units > kMaxUnits) return bad("is too large");
    }
  }
  if (!digits) return bad("has no digits");
  for (int i = fraction_digits; i < 9; ++i) fraction *= 10;
  const int64_t nanos = units * kRateNanosPerUnit + fraction;
  if (nanos <= 0) return bad("is not above 0");
  if (nanos > kMaxUnits * kRateNanosPerUnit) return bad("is too large");
  return nanos;
}

std::string RateText(int64_t nanos) {
  std::string fraction = std::to_string(kRateNanosPerUnit + nanos % kRateNanosPerUnit).substr(1);
  while (fraction.size() > 2 && fraction.back() == '0') fraction.pop_back();
  return std::to_string(nanos / kRateNanosPerUnit) + "." + fraction;
}

CurrencyConverter::CurrencyConverter(const std::vector<ExchangeRates>& declared) {
  for (const ExchangeRates& resource : declared) {
    for (const ExchangeRate& r : resource.rates) {
      if (r.nanos <= 0 || r.from == r.to) continue;  // refused by the loader
      AppliedRate applied{r.from, r.to, RateText(r.nanos), resource.as_of, resource.metadata.name};
      // The first declaration of a pair wins; the loader refuses a second.
      rates_.emplace(PairKey(r.from, r.to), Entry{r.nanos, false, applied});
      rates_.emplace(PairKey(r.to, r.from), Entry{r.nanos, true, applied});
    }
  }
}

const CurrencyConverter::Entry* CurrencyConverter::Find(std::string_view from, std::string_view to) const {
  auto it = rates_.find(PairKey(from, to));
  return it == rates_.end() ? nullptr : &it->second;
}

bool CurrencyConverter::CanConvert(std::string_view from, std::string_view to) const {
  return from.empty() || to.empty() || from == to || Find(from, to) != nullptr;
}

std::map<std::string, double> CurrencyConverter::RatesFrom(const std::string& from) const {
  if (from.empty()) return {};  // an unpriced cluster: nothing to convert
  std::map<std::string, double> out{{from, 1.0}};
  const std::string prefix = from + ">";
  for (auto it = rates_.lower_bound(prefix); it != rates_.end() && it->first.starts_with(prefix); ++it) {
    const double rate = static_cast<double>(it->second.nanos) / kRateNanosPerUnit;
    out[it->first.substr(prefix.size())] = it->second.inverse ? 1.0 / rate : rate;
  }
  return out;
}

std::optional<AppliedRate> CurrencyConverter::RateFor(std::string_view from, std::string_view to) const {
  const Entry* e = Find(from, to);
  if (e == nullptr) return std::nullopt;
  return e->applied;
}

Result<Money> CurrencyConverter::Convert(const Money& amount, std::string_view currency,
                                         std::vector<AppliedRate>* used) const {
  if (currency.empty() || amount.currency() == currency) return amount;
  if (amount.currency().empty()) return Money(amount.micros(), std::string(currency));
  const Entry* e = Find(amount.currency(), currency);
  if (e == nullptr) {
    return InvalidArgument("no exchange rate from " + amount.currency() + " to " + std::string(currency) +
                           " (declare one in an ExchangeRates resource)");
  }
  if (used != nullptr) {
    bool known = false;
    for (const AppliedRate& a : *used) known = known || a == e->applied;
    if (!known) used->push_back(e->applied);
  }
  return e->inverse ? amount.ConvertedAtInverse(e->nanos, std::string(currency))
                    : amount.ConvertedAt(e->nanos, std::string(currency));
}

}  // namespace gpufed::model
