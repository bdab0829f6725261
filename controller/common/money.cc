#include "controller/common/money.h"

#include <cctype>
#include <limits>

namespace gpufed {
namespace {

constexpr __int128 kMaxMicros = std::numeric_limits<int64_t>::max();

int64_t Saturate(__int128 value) {
  if (value > kMaxMicros) return std::numeric_limits<int64_t>::max();
  if (value < -kMaxMicros) return -std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(value);
}

// Quotients beyond this are far outside int64 for every denominator used here (at most
// 3.6e9 < 2^32), and below it n +- d/2 cannot overflow 128 bits.
constexpr __int128 kWideLimit = static_cast<__int128>(1) << 125;

int64_t DivRound(__int128 numerator, __int128 denominator) {
  // Most quotients here have 64-bit operands, where a division is several times cheaper
  // than __int128's (the placer prices every candidate cluster of every decision). Within
  // these bounds n +- half cannot overflow, and both divisions truncate alike.
  constexpr __int128 kFast = std::numeric_limits<int64_t>::max() / 2;
  if (numerator > -kFast && numerator < kFast && denominator > 0 && denominator < kFast) {
    const int64_t n = static_cast<int64_t>(numerator);
    const int64_t d = static_cast<int64_t>(denominator);
    return n >= 0 ? (n + d / 2) / d : (n - d / 2) / d;
  }
  if (numerator >= kWideLimit) return std::numeric_limits<int64_t>::max();
  if (numerator <= -kWideLimit) return -std::numeric_limits<int64_t>::max();
  __int128 half = denominator / 2;
  __int128 q = numerator >= 0 ? (numerator + half) / denominator : (numerator - half) / denominator;
  return Saturate(q);
}

// a x b x c, or +-kWideLimit (by the product's sign) when it does not fit 128 bits.
__int128 WideProduct(int64_t a, int64_t b, int64_t c) {
  __int128 ab = 0, abc = 0;
  if (!__builtin_mul_overflow(static_cast<__int128>(a), static_cast<__int128>(b), &ab) &&
      !__builtin_mul_overflow(ab, static_cast<__int128>(c), &abc)) {
    return abc;
  }
  const bool negative = (a < 0) != (b < 0) ? c >= 0 : c < 0;
  return negative ? -kWideLimit : kWideLimit;
}

bool IsDigit(char ch) { return ch >= '0' && ch <= '9'; }

}  // namespace

Result<Money> Money::Parse(std::string_view text, std::string_view default_currency) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("money '" + std::string(text) + "' " + why + " (example: \"400.00 EUR\")");
  };
  if (text.size() > kMaxTextLength) return bad("is too long");
  size_t pos = 0;
  while (pos < text.size() && text[pos] == ' ') ++pos;
  bool negative = false;
  if (pos < text.size() && text[pos] == '-') {
    negative = true;
    ++pos;
  }
  // Whole units are bounded digit by digit, so they stay far inside 128 bits.
  constexpr __int128 kMaxUnits = kMaxMicros / kMicrosPerUnit;
  __int128 units = 0;
  int64_t fraction = 0;  // micro-units: the first six decimals
  int fraction_digits = 0;
  bool digits = false, in_fraction = false, too_large = false, too_fine = false;
  for (; pos < text.size(); ++pos) {
    const char ch = text[pos];
    if (ch == '.' && !in_fraction) {
      in_fraction = true;
      continue;
    }
    if (!IsDigit(ch)) break;
    digits = true;
    if (in_fraction) {
      // Decimals past the sixth are exact only as zeros ("1.50000000").
      if (++fraction_digits > 6) {
        too_fine = too_fine || ch != '0';
      } else {
        fraction = fraction * 10 + (ch - '0');
      }
    } else {
      units = units * 10 + (ch - '0');
      if (units > kMaxUnits) {
        too_large = true;
        units = kMaxUnits + 1;  // keeps reading the text without growing
      }
    }
  }
  if (!digits) return bad("has no amount");
  if (pos < text.size() && text[pos] == ',') {
    return bad("has a comma: write the amount without thousands separators and with a point for decimals");
  }
  if (too_fine) return bad("has more than 6 decimals");
  for (int i = fraction_digits; i < 6; ++i) fraction *= 10;
  while (pos < text.size() && text[pos] == ' ') ++pos;
  std::string currency(text.substr(pos));
  if (currency.empty()) {
    currency = std::string(default_currency);
  } else {
    if (currency.size() != 3) return bad("needs a three-letter currency code");
    for (char ch : currency) {
      if (ch < 'A' || ch > 'Z') return bad("needs an upper-case currency code");
    }
  }
  const __int128 micros = units * kMicrosPerUnit + fraction;
  if (too_large || micros > kMaxMicros) return bad("is too large (at most 9223372036854.775807 in magnitude)");
  return Money(static_cast<int64_t>(negative ? -micros : micros), currency);
}

Money Money::TimesHours(int64_t count, int64_t millis) const {
  return Money(DivRound(WideProduct(micros_, count, millis), 3600000), currency_);
}

int64_t Money::GpuMilliHoursMicrosWide(int64_t micros_per_hour, int64_t gpu_milli, int64_t millis) {
  return DivRound(WideProduct(micros_per_hour, gpu_milli, millis), __int128{3600000} * 1000);
}

Money Money::TimesGpuMilliHours(int64_t gpu_milli, int64_t millis) const {
  return Money(GpuMilliHoursMicros(micros_, gpu_milli, millis), currency_);
}

int64_t Money::SaturatingAdd(int64_t a, int64_t b) { return Saturate(static_cast<__int128>(a) + b); }

Money Money::TimesMilli(int64_t milli) const {
  return Money(DivRound(static_cast<__int128>(micros_) * milli, 1000), currency_);
}

bool Money::SameCurrency(const Money& other) const {
  return currency_.empty() || other.currency_.empty() || currency_ == other.currency_;
}

namespace {
Status CurrencyMismatch(const char* what, const Money& a, const Money& b) {
  return InvalidArgument(std::string("cannot ") + what + " " + a.ToString() + " and " + b.ToString() +
                         ": different currencies (convert one through an exchange rate first)");
}
}  // namespace

Result<Money> Money::Plus(const Money& other) const {
  if (!SameCurrency(other)) return CurrencyMismatch("add", *this, other);
  return Money(SaturatingAdd(micros_, other.micros_), currency_.empty() ? other.currency_ : currency_);
}

Result<Money> Money::Minus(const Money& other) const {
  if (!SameCurrency(other)) return CurrencyMismatch("subtract", *this, other);
  return Money(Saturate(static_cast<__int128>(micros_) - other.micros_),
               currency_.empty() ? other.currency_ : currency_);
}

Result<std::strong_ordering> Money::Compare(const Money& other) const {
  if (!SameCurrency(other)) return CurrencyMismatch("compare", *this, other);
  return micros_ <=> other.micros_;
}

Money Money::ConvertedAt(int64_t rate_nanos, std::string currency) const {
  return Money(DivRound(static_cast<__int128>(micros_) * rate_nanos, 1000000000), std::move(currency));
}

Money Money::ConvertedAtInverse(int64_t rate_nanos, std::string currency) const {
  if (rate_nanos <= 0) return Money(0, std::move(currency));
  return Money(DivRound(static_cast<__int128>(micros_) * 1000000000, rate_nanos), std::move(currency));
}

void MoneyTotals::Add(const Money& amount) {
  // Nothing without a currency (an unpriced attempt) stands beside a priced total.
  if (amount.currency().empty() && amount.is_zero() && !by_currency_.empty()) return;
  if (!amount.currency().empty()) {
    auto none = by_currency_.find("");
    if (none != by_currency_.end() && none->second.is_zero()) by_currency_.erase(none);
  }
  Money& total = by_currency_[amount.currency()];
  // One key per currency: this sum cannot mix two.
  total = Money(Money::SaturatingAdd(total.micros(), amount.micros()), amount.currency());
}

MoneyTotals MoneyTotals::DividedBy(int64_t n) const {
  MoneyTotals out;
  for (const auto& [currency, total] : by_currency_) {
    out.by_currency_[currency] = Money(n > 0 ? total.micros() / n : 0, currency);
  }
  return out;
}

std::string MoneyTotals::ToDisplayString(std::string_view none) const {
  if (by_currency_.empty()) return std::string(none);
  std::string text;
  for (const auto& [currency, total] : by_currency_) text += (text.empty() ? "" : " + ") + total.ToDisplayString();
  return text;
}

std::string Money::AmountString() const {
  // Unsigned, so that INT64_MIN (a Money built from raw micros) has a magnitude too.
  const uint64_t abs = micros_ < 0 ? 0 - static_cast<uint64_t>(micros_) : static_cast<uint64_t>(micros_);
  std::string frac = std::to_string(abs % kMicrosPerUnit);
  frac.insert(0, 6 - frac.size(), '0');
  while (frac.size() > 2 && frac.back() == '0') frac.pop_back();
  std::string out = micros_ < 0 ? "-" : "";
  out += std::to_string(abs / kMicrosPerUnit);
  out += '.';
  out += frac;
  return out;
}

int Money::MinorUnitDigits(std::string_view currency) {
  // ISO 4217 codes whose minor unit is not the cent; the list changes rarely (a code
  // missing here prints two decimals, which never hides an amount's units).
  static constexpr std::string_view kZero[] = {"BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG",
                                               "RWF", "UGX", "UYI", "VND", "VUV", "XAF", "XOF", "XPF"};
  static constexpr std::string_view kThree[] = {"BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"};
  for (std::string_view c : kZero) {
    if (c == currency) return 0;
  }
  for (std::string_view c : kThree) {
    if (c == currency) return 3;
  }
  return 2;
}

std::string Money::ToDisplayString() const {
  const int digits = MinorUnitDigits(currency_);
  int64_t scale = kMicrosPerUnit;
  for (int i = 0; i < digits; ++i) scale /= 10;
  // Rounded to the minor unit in 128 bits: |INT64_MIN| and a rounding up at the top of
  // the range still fit.
  const __int128 micros = micros_;
  const __int128 magnitude = micros < 0 ? -micros : micros;
  const __int128 minor = (magnitude + scale / 2) / scale;
  __int128 per_unit = 1;
  for (int i = 0; i < digits; ++i) per_unit *= 10;
  std::string units = std::to_string(static_cast<uint64_t>(minor / per_unit));
  std::string grouped;
  for (size_t i = 0; i < units.size(); ++i) {
    if (i > 0 && (units.size() - i) % 3 == 0) grouped += ',';
    grouped += units[i];
  }
  std::string out = micros < 0 && minor != 0 ? "-" : "";
  out += grouped;
  if (digits > 0) {
    std::string frac = std::to_string(static_cast<uint64_t>(minor % per_unit));
    out += '.';
    out += std::string(static_cast<size_t>(digits) - frac.size(), '0') + frac;
  }
  return currency_.empty() ? out : out + " " + currency_;
}

std::string Money::ToString() const { return currency_.empty() ? AmountString() : AmountString() + " " + currency_; }

}  // namespace gpufed
