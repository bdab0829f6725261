#pragma once
// Exact decimal money: an int64 count of micro-units (1e-6) of a currency.
// No binary floating point touches an amount; products with time are computed in
// 128-bit integers and rounded half away from zero to the micro-unit.
//
// Range: |micros| <= INT64_MAX (9223372036854.775807 units). Parse refuses anything
// outside it, INT64_MIN included, so an amount can always be negated; arithmetic
// saturates at +-INT64_MAX instead of overflowing.
//
// One currency per sum and comparison: Plus, Minus and Compare return an error for two
// different currencies, and Money has no <, >, <=>, so no path can add or compare EUR
// with USD as plain numbers. Converting is explicit (ConvertedAt, through the rates a
// repository declares: model/exchange_rates.h). An empty currency is "no currency yet"
// (a zero accumulator, a price written without one before its cluster's currency
// applies): it is compatible with every currency and takes the other's.
#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed {

class Money {
 public:
  static constexpr int64_t kMicrosPerUnit = 1000000;
  static constexpr size_t kMaxTextLength = 64;

  Money() = default;
  Money(int64_t micros, std::string currency) : micros_(micros), currency_(std::move(currency)) {}

  // "400.00 EUR", "400 EUR", "1.10" (then default_currency applies; empty means none).
  // Grammar: spaces, [-] digits [. digits], spaces, [three upper-case letters]; at most
  // kMaxTextLength characters; no exponent. Amounts are exact: decimals past the sixth
  // must be zeros ("1.0000001" is an error, never rounded); out of range is an error.
  static Result<Money> Parse(std::string_view text, std::string_view default_currency = "");

  int64_t micros() const { return micros_; }
  const std::string& currency() const { return currency_; }
  bool is_zero() const { return micros_ == 0; }

  // price-per-GPU-hour x GPU share (1000 = one GPU) x runtime.
  Money TimesGpuMilliHours(int64_t gpu_milli, int64_t millis) const;
  // TimesGpuMilliHours without the currency: for hot loops that compare amounts.
  // Inline with a constant divisor (a multiply, not a division) where the product fits
  // 64 bits comfortably, which is every realistic price and runtime; the rest is exact
  // in 128 bits. Both round half away from zero alike.
  static int64_t GpuMilliHoursMicros(int64_t micros_per_hour, int64_t gpu_milli, int64_t millis) {
    constexpr int64_t kPerHour = int64_t{3'600'000} * 1000;  // millis per hour x milli per GPU
    constexpr int64_t kFast = INT64_MAX / 2;
    int64_t product = 0;
    if (!__builtin_mul_overflow(micros_per_hour, gpu_milli, &product) &&
        !__builtin_mul_overflow(product, millis, &product) && product > -kFast && product < kFast) {
      return product >= 0 ? (product + kPerHour / 2) / kPerHour : (product - kPerHour / 2) / kPerHour;
    }
    return GpuMilliHoursMicrosWide(micros_per_hour, gpu_milli, millis);
  }
  static int64_t GpuMilliHoursMicrosWide(int64_t micros_per_hour, int64_t gpu_milli, int64_t millis);
  // a + b, saturating at +-INT64_MAX like Plus.
  static int64_t SaturatingAdd(int64_t a, int64_t b);
  // price-per-hour x count x duration. `millis` of runtime; result in the same currency.
  Money TimesHours(int64_t count, int64_t millis) const;
  // Currencies must match (or one be empty; SameCurrency), else an error naming both.
  // Both saturate at +-INT64_MAX micros.
  Result<Money> Plus(const Money& other) const;
  Result<Money> Minus(const Money& other) const;
  // The order of two amounts of one currency (SameCurrency), else an error naming both.
  Result<std::strong_ordering> Compare(const Money& other) const;
  // This amount in `currency` at `rate_nanos` (> 0) units of it per unit of this one, in
  // 1e-9 units; exact in 128 bits, rounded half away from zero to the micro-unit.
  // ConvertedAtInverse: at `rate_nanos` units of this currency per unit of `currency`.
  // Only model::CurrencyConverter calls these: it knows which rate applies.
  Money ConvertedAt(int64_t rate_nanos, std::string currency) const;
  Money ConvertedAtInverse(int64_t rate_nanos, std::string currency) const;
  // Scales by a ratio given as milli-units (e.g. GiB counts in milli).
  Money TimesMilli(int64_t milli) const;

  // "12.34 EUR" (two decimals unless more are needed; trailing zeros trimmed past 2).
  std::string ToString() const;
  // "12.34" without the currency.
  std::string AmountString() const;
  // For people reading tables: rounded half away from zero to the currency's minor unit
  // (MinorUnitDigits), thousands separated by commas: "19,652.54 EUR", "-1,200 JPY",
  // "0.20" (no currency). Exact amounts (CSV, JSON, the journal) use ToString.
  std::string ToDisplayString() const;
  // Decimal digits of the currency's minor unit (ISO 4217): 0 for JPY, KRW, ...; 3 for
  // BHD, KWD, ...; 2 for every other code, and for no currency.
  static int MinorUnitDigits(std::string_view currency);

  // Equal currencies, or one of them empty.
  bool SameCurrency(const Money& other) const;
  // Equality is exact: 1.00 EUR is not 1.00 USD. (There is no ordering operator: Compare.)
  friend bool operator==(const Money& a, const Money& b) {
    return a.micros_ == b.micros_ && a.currency_ == b.currency_;
  }

 private:
  int64_t micros_ = 0;
  std::string currency_;
};

// Amounts summed per currency: totals over clusters that price in different currencies
// (the run summary, tables) without a rate to convert them, never added as numbers.
class MoneyTotals {
 public:
  // An amount without a currency counts under "" (a zero one only while nothing else is).
  void Add(const Money& amount);
  bool empty() const { return by_currency_.empty(); }
  const std::map<std::string, Money>& by_currency() const { return by_currency_; }
  // Each currency's total divided by n > 0, truncated toward zero (a mean per job).
  MoneyTotals DividedBy(int64_t n) const;
  // "1,662.67 EUR + 12.00 USD" in currency order (ToDisplayString each); `none` if empty.
  std::string ToDisplayString(std::string_view none = "0.00") const;

 private:
  std::map<std::string, Money> by_currency_;
};

}  // namespace gpufed
