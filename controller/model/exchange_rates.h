#pragma once
// Exchange rates: the ExchangeRates resource a repository may declare (one per
// repository, with the date its rates are valid for) and the one conversion of money
// between currencies, CurrencyConverter, that every path uses: budget admission and
// forecasts, maxCost, cost scores, stdlib price caps, tenant spend. Money itself refuses
// to add or compare across currencies (common/money.h); this is the only way across.
//
// A rate is exact: up to 9 decimals, units of `to` per unit of `from`. A declared pair
// converts both ways (the other way divides by the rate, rounded half away from zero
// to the micro-unit), so a repository declares USD->EUR or EUR->USD, never both.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/common/money.h"
#include "controller/common/status.h"
#include "controller/model/meta.h"

namespace gpufed::model {

// 1e-9 units: "0.92" is 920000000.
inline constexpr int64_t kRateNanosPerUnit = 1000000000;
// Grammar: digits [. up to 9 digits], above 0 and at most 1e9.
Result<int64_t> ParseRateNanos(std::string_view text);
// "0.92", "1.0512", "163.25": the shortest exact decimal (at least two decimals).
std::string RateText(int64_t nanos);

struct ExchangeRate {
  std::string from;  // three-letter codes
  std::string to;
  int64_t nanos = 0;  // units of `to` per unit of `from`, x 1e9
  SourceLocation location;
  bool operator==(const ExchangeRate&) const = default;
};

struct ExchangeRates {
  ObjectMeta metadata;
  std::string as_of;  // YYYY-MM-DD: the day the rates are valid for
  std::vector<ExchangeRate> rates;
  bool operator==(const ExchangeRates&) const = default;
};

// The rate one conversion used, as a decision records it: the pair as declared, so
// USD->EUR at 0.92 reads the same whichever way it converted.
struct AppliedRate {
  std::string from;
  std::string to;
  std::string rate;   // RateText
  std::string as_of;  // the resource's asOf
  std::string source;  // the ExchangeRates resource's name
  bool operator==(const AppliedRate&) const = default;
};

class CurrencyConverter {
 public:
  CurrencyConverter() = default;  // no rates: only same-currency "conversions"
  explicit CurrencyConverter(const std::vector<ExchangeRates>& declared);

  // `amount` in `currency`. The same currency, an empty target, or an amount without a
  // currency (it takes `currency`) need no rate. Otherwise the declared rate for the pair
  // (either way) applies and is appended to `used` (once per pair); without one, an error
  // naming the pair.
  Result<Money> Convert(const Money& amount, std::string_view currency, std::vector<AppliedRate>* used = nullptr) const;
  bool CanConvert(std::string_view from, std::string_view to) const;
  // Units of every currency a declared rate reaches from `from`, per unit of `from`, for
  // views (a double: hooks compare, they do not book); `from` itself at 1.
  std::map<std::string, double> RatesFrom(const std::string& from) const;
  // The declared rate for the pair, either way.
  std::optional<AppliedRate> RateFor(std::string_view from, std::string_view to) const;

 private:
  struct Entry {
    int64_t nanos = 0;
    bool inverse = false;  // declared as to->from
    AppliedRate applied;
  };
  const Entry* Find(std::string_view from, std::string_view to) const;
  std::map<std::string, Entry> rates_;  // "FROM>TO", both ways of each declared pair
};

}  // namespace gpufed::model
