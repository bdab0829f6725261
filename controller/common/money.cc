#include "controller/common/money.h"

#include <cctype>
#include <limits>

namespace gpufed {
namespace {

constexpr __int128 kMaxMicros = std::numeric_limits<int64_t>::max();

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
  __int128 half = denominator / 2;
  __int128 q = numerator >= 0 ? (numerator + half) / denominator : (numerator - half) / denominator;
  if (q > kMaxMicros) return std::numeric_limits<int64_t>::max();
  if (q < -kMaxMicros) return -std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(q);
}

}  // namespace

Result<Money> Money::Parse(std::string_view text, std::string_view default_currency) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("money '" + std::string(text) + "' " + why + " (example: \"400.00 EUR\")");
  };
  if (text.size() > 40) return bad("is too long");
  size_t pos = 0;
  while (pos < text.size() && text[pos] == ' ') ++pos;
  bool negative = false;
  if (pos < text.size() && text[pos] == '-') {
    negative = true;
    ++pos;
  }
  __int128 units = 0;
  int64_t fraction = 0;
  int fraction_digits = 0;
  bool digits = false, in_fraction = false;
  for (; pos < text.size(); ++pos) {
    char ch = text[pos];
    if (ch == '.' && !in_fraction) {
      in_fraction = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(ch))) break;
    digits = true;
    if (in_fraction) {
      if (++fraction_digits > 6) return bad("has more than 6 decimals");
      fraction = fraction * 10 + (ch - '0');
    } else {
      units = units * 10 + (ch - '0');
      if (units * kMicrosPerUnit > kMaxMicros) return bad("is too large");
    }
  }
  if (!digits) return bad("has no amount");
  for (int i = fraction_digits; i < 6; ++i) fraction *= 10;
  while (pos < text.size() && text[pos] == ' ') ++pos;
  std::string currency(text.substr(pos));
  if (currency.empty()) {
    currency = std::string(default_currency);
  } else {
    if (currency.size() != 3) return bad("needs a three-letter currency code");
    for (char ch : currency) {
      if (!std::isupper(static_cast<unsigned char>(ch))) return bad("needs an upper-case currency code");
    }
  }
  __int128 micros = units * kMicrosPerUnit + fraction;
  return Money(static_cast<int64_t>(negative ? -micros : micros), currency);
}

Money Money::TimesHours(int64_t count, int64_t millis) const {
  __int128 product = static_cast<__int128>(micros_) * count * millis;
  return Money(DivRound(product, 3600000), currency_);
}

int64_t Money::GpuMilliHoursMicrosWide(int64_t micros_per_hour, int64_t gpu_milli, int64_t millis) {
  const __int128 product = static_cast<__int128>(micros_per_hour) * gpu_milli * millis;
  return DivRound(product, __int128{3600000} * 1000);
}

Money Money::TimesGpuMilliHours(int64_t gpu_milli, int64_t millis) const {
  return Money(GpuMilliHoursMicros(micros_, gpu_milli, millis), currency_);
}

int64_t Money::SaturatingAdd(int64_t a, int64_t b) {
  const __int128 sum = static_cast<__int128>(a) + b;
  return sum > kMaxMicros ? static_cast<int64_t>(kMaxMicros) : static_cast<int64_t>(sum);
}

Money Money::TimesMilli(int64_t milli) const {
  return Money(DivRound(static_cast<__int128>(micros_) * milli, 1000), currency_);
}

bool Money::SameCurrency(const Money& other) const {
  return currency_.empty() || other.currency_.empty() || currency_ == other.currency_;
}

Money Money::Plus(const Money& other) const {
  return Money(SaturatingAdd(micros_, other.micros_), currency_.empty() ? other.currency_ : currency_);
}

Money Money::Minus(const Money& other) const {
  return Money(micros_ - other.micros_, currency_.empty() ? other.currency_ : currency_);
}

std::string Money::AmountString() const {
  int64_t abs = micros_ < 0 ? -micros_ : micros_;
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

std::string Money::ToString() const {
  return currency_.empty() ? AmountString() : AmountString() + " " + currency_;
}

}  // namespace gpufed
