#include "controller/common/quantity.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

namespace gpufed {
namespace {

struct Suffix {
  std::string_view text;
  int decimal_exponent;  // the suffix is 10^decimal_exponent x 2^binary_exponent units
  int binary_exponent;
};

constexpr std::array<Suffix, 14> kSuffixes = {{
    {"Ki", 0, 10},
    {"Mi", 0, 20},
    {"Gi", 0, 30},
    {"Ti", 0, 40},
    {"Pi", 0, 50},
    {"Ei", 0, 60},
    {"m", -3, 0},
    {"k", 3, 0},
    {"M", 6, 0},
    {"G", 9, 0},
    {"T", 12, 0},
    {"P", 15, 0},
    {"E", 18, 0},
    {"", 0, 0},
}};

using u128 = unsigned __int128;
constexpr u128 kMaxMilli = INT64_MAX;
// An exponent is read up to this size and then only judged: any number with one this
// large is far outside the range (or zero), and the arithmetic below stays in int.
constexpr int kExponentCap = 100000;

bool IsDigit(char ch) { return ch >= '0' && ch <= '9'; }

// The text's number as significant digits (no leading or trailing zeros) and the
// position of the decimal point relative to them: value = 0.<digits> x 10^point.
struct Decimal {
  std::string digits;
  int point = 0;
};

// Milli-units of `d` x 2^binary_exponent, rounded away from zero when not whole.
// `below_one` is set when a non-zero value is smaller than one milli-unit.
struct Magnitude {
  u128 milli = 0;
  bool exact = true;
  bool too_large = false;
  bool below_one = false;
};

Magnitude ToMilli(const Decimal& d, int binary_exponent) {
  Magnitude out;
  if (d.digits.empty()) return out;  // zero, whatever the exponent
  // value >= 0.1 x 10^point; from point 20 on that is >= 10^19 > INT64_MAX.
  if (d.point >= 20) {
    out.too_large = true;
    return out;
  }
  // value < 10^point x 2^60 < 10^(point + 19): from point -19 down, below one milli-unit.
  if (d.point <= -19) {
    out.below_one = true;
    return out;
  }
  const u128 factor = u128{1} << binary_exponent;  // at most 2^60
  // Whole part: the first `point` digits (padded with zeros), < 10^19, times the factor
  // stays below 10^19 x 2^60 < 2^124.
  u128 whole = 0;
  for (int i = 0; i < d.point; ++i) {
    whole = whole * 10 + (static_cast<size_t>(i) < d.digits.size() ? d.digits[i] - '0' : 0);
  }
  whole *= factor;
  // Fraction: 0.<zeros><rest of the digits> x factor, long-multiplied from the last
  // digit: the carry out of the first digit is the whole part of the product, and the
  // product is whole iff every digit written back is zero. Carries stay below factor.
  const size_t first = d.point > 0 ? static_cast<size_t>(d.point) : 0;
  u128 carry = 0;
  bool fraction_zero = true;
  for (size_t i = d.digits.size(); i > first; --i) {
    const u128 t = static_cast<u128>(d.digits[i - 1] - '0') * factor + carry;
    fraction_zero = fraction_zero && t % 10 == 0;
    carry = t / 10;
  }
  // Leading zeros of the fraction (point < 0) shift the product right by -point digits.
  for (int i = d.point; i < 0; ++i) {
    fraction_zero = fraction_zero && carry % 10 == 0;
    carry /= 10;
  }
  out.milli = whole + carry;
  out.exact = fraction_zero;
  if (!out.exact) {
    if (out.milli == 0) {
      out.below_one = true;
      return out;
    }
    out.milli += 1;  // away from zero, as Kubernetes rounds
  }
  out.too_large = out.milli > kMaxMilli;
  return out;
}

}  // namespace

Result<Quantity> Quantity::Parse(std::string_view text) {
  auto bad = [&](const std::string& why) { return InvalidArgument("quantity '" + std::string(text) + "' " + why); };
  if (text.empty()) return InvalidArgument("empty quantity");
  if (text.size() > kMaxTextLength) {
    return InvalidArgument("quantity text too long (more than " + std::to_string(kMaxTextLength) + " characters)");
  }
  size_t pos = 0;
  bool negative = false;
  if (text[pos] == '+' || text[pos] == '-') {
    negative = text[pos] == '-';
    ++pos;
  }
  Decimal number;
  bool any_digit = false, in_fraction = false;
  int whole_digits = 0;  // digits before the point, leading zeros excluded
  for (; pos < text.size(); ++pos) {
    const char ch = text[pos];
    if (ch == '.' && !in_fraction) {
      in_fraction = true;
      continue;
    }
    if (!IsDigit(ch)) break;
    any_digit = true;
    if (number.digits.empty() && ch == '0') {
      if (in_fraction) --number.point;  // 0.05: the point sits one digit further left
      continue;
    }
    number.digits += ch;
    if (!in_fraction) ++whole_digits;
  }
  if (!any_digit) return bad("has no digits");
  while (!number.digits.empty() && number.digits.back() == '0') number.digits.pop_back();
  number.point += whole_digits;

  // Milli-units: three more digits before the point, then the exponent or the suffix.
  int shift = 3;
  int binary_exponent = 0;
  const std::string_view rest = text.substr(pos);
  if (rest.size() > 1 && (rest[0] == 'e' || rest[0] == 'E') && (IsDigit(rest[1]) || rest[1] == '-' || rest[1] == '+')) {
    size_t i = 1;
    bool exponent_negative = false;
    if (rest[i] == '-' || rest[i] == '+') exponent_negative = rest[i++] == '-';
    if (i >= rest.size()) return bad("has a bad exponent");
    int exponent = 0;
    for (; i < rest.size(); ++i) {
      if (!IsDigit(rest[i])) return bad("has a bad exponent");
      if (exponent < kExponentCap) exponent = exponent * 10 + (rest[i] - '0');
    }
    shift += exponent_negative ? -exponent : exponent;
  } else {
    const Suffix* suffix = nullptr;
    for (const Suffix& s : kSuffixes) {
      if (rest == s.text) suffix = &s;
    }
    if (suffix == nullptr) {
      if (rest.size() > 1 && rest[0] == '/' && rest.size() < 8 &&
          std::all_of(rest.begin() + 1, rest.end(), [](char ch) { return IsDigit(ch); })) {
        // "1/8": the same amount in thousandths, when both sides are small whole numbers.
        const std::string_view whole = text.substr(0, text.size() - rest.size());
        const long denominator = std::stol(std::string(rest.substr(1)));
        if (denominator > 0 && whole.find('.') == std::string_view::npos && whole.size() < 8) {
          const long numerator = std::stol(std::string(whole));
          return bad("is a fraction: write it in thousandths, " + std::to_string(numerator * 1000 / denominator) +
                     "m for " + std::string(text));
        }
        return bad("is a fraction: write it as a decimal or in thousandths (250m is a quarter)");
      }
      return bad("has an unknown suffix '" + std::string(rest) + "' (use Ki, Mi, Gi, Ti, k, M, G, T or m)");
    }
    shift += suffix->decimal_exponent;
    binary_exponent = suffix->binary_exponent;
  }
  number.point += shift;  // |point| <= 64 + kExponentCap + 21: no overflow

  const Magnitude m = ToMilli(number, binary_exponent);
  if (m.too_large) return bad("is too large (at most 9223372036854775807m in magnitude)");
  if (m.below_one) return bad("is below 1m, the smallest quantity (write 1m if that is meant)");
  const auto milli = static_cast<int64_t>(m.milli);
  return Quantity(negative ? -milli : milli);
}

std::string Quantity::ToString() const {
  if (milli_ % 1000 != 0) return std::to_string(milli_) + "m";
  int64_t units = milli_ / 1000;
  static constexpr std::array<std::string_view, 5> kBinary = {"Ki", "Mi", "Gi", "Ti", "Pi"};
  std::string suffix;
  for (size_t i = 0; i < kBinary.size() && units != 0 && units % 1024 == 0; ++i) {
    units /= 1024;
    suffix = kBinary[i];
  }
  return std::to_string(units) + suffix;
}

}  // namespace gpufed
