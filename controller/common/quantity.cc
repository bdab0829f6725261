#include "controller/common/quantity.h"

#include <array>
#include <cctype>
#include <limits>

namespace gpufed {
namespace {

struct Suffix {
  std::string_view text;
  __int128 multiplier;  // in milli-units
};

constexpr __int128 kMilliPerUnit = 1000;
constexpr std::array<Suffix, 14> kSuffixes = {{
    {"Ki", kMilliPerUnit << 10}, {"Mi", kMilliPerUnit << 20}, {"Gi", kMilliPerUnit << 30},
    {"Ti", kMilliPerUnit << 40}, {"Pi", kMilliPerUnit << 50}, {"Ei", kMilliPerUnit << 60},
    {"m", 1},                     {"k", kMilliPerUnit * 1000},
    {"M", kMilliPerUnit * 1000000}, {"G", kMilliPerUnit * 1000000000},
    {"T", kMilliPerUnit * 1000000000000}, {"P", kMilliPerUnit * 1000000000000000},
    {"E", kMilliPerUnit * 1000000000000000000}, {"", kMilliPerUnit},
}};

constexpr __int128 kMaxMilli = std::numeric_limits<int64_t>::max();

}  // namespace

Result<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return InvalidArgument("empty quantity");
  if (text.size() > 40) return InvalidArgument("quantity text too long");
  size_t pos = 0;
  bool negative = false;
  if (text[pos] == '+' || text[pos] == '-') {
    negative = text[pos] == '-';
    ++pos;
  }
  // Digits with an optional fraction, kept as an integer mantissa and a decimal scale.
  __int128 mantissa = 0;
  int scale = 0;
  bool digits = false, in_fraction = false;
  for (; pos < text.size(); ++pos) {
    char ch = text[pos];
    if (ch == '.' && !in_fraction) {
      in_fraction = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(ch))) break;
    digits = true;
    if (mantissa > kMaxMilli * 10) return InvalidArgument("quantity '" + std::string(text) + "' is too large");
    mantissa = mantissa * 10 + (ch - '0');
    if (in_fraction) ++scale;
  }
  if (!digits) return InvalidArgument("quantity '" + std::string(text) + "' has no digits");
  std::string_view rest = text.substr(pos);
  int exponent = 0;
  __int128 multiplier = 0;
  if (!rest.empty() && (rest[0] == 'e' || rest[0] == 'E') && rest.size() > 1 &&
      (std::isdigit(static_cast<unsigned char>(rest[1])) || rest[1] == '-' || rest[1] == '+')) {
    size_t i = 1;
    bool exp_negative = false;
    if (rest[i] == '-' || rest[i] == '+') exp_negative = rest[i++] == '-';
    if (i >= rest.size()) return InvalidArgument("quantity '" + std::string(text) + "' has a bad exponent");
    for (; i < rest.size(); ++i) {
      if (!std::isdigit(static_cast<unsigned char>(rest[i])) || exponent > 30) {
        return InvalidArgument("quantity '" + std::string(text) + "' has a bad exponent");
      }
      exponent = exponent * 10 + (rest[i] - '0');
    }
    if (exp_negative) exponent = -exponent;
    multiplier = kMilliPerUnit;
  } else {
    for (const Suffix& s : kSuffixes) {
      if (rest == s.text) {
        multiplier = s.multiplier;
        break;
      }
    }
    if (multiplier == 0) {
      return InvalidArgument("quantity '" + std::string(text) + "' has an unknown suffix '" + std::string(rest) +
                             "' (use Ki, Mi, Gi, Ti, k, M, G, T or m)");
    }
  }
  constexpr __int128 kInt128Max = ~(static_cast<unsigned __int128>(1) << 127);
  if (mantissa > kInt128Max / multiplier) return InvalidArgument("quantity '" + std::string(text) + "' is too large");
  __int128 value = mantissa * multiplier;
  int net = exponent - scale;
  for (; net > 0; --net) {
    value *= 10;
    if (value > kMaxMilli) return InvalidArgument("quantity '" + std::string(text) + "' is too large");
  }
  __int128 divisor = 1;
  for (; net < 0; ++net) divisor *= 10;
  if (value % divisor != 0) {
    return InvalidArgument("quantity '" + std::string(text) + "' is finer than milli precision");
  }
  value /= divisor;
  if (value > kMaxMilli) return InvalidArgument("quantity '" + std::string(text) + "' is too large");
  return Quantity(static_cast<int64_t>(negative ? -value : value));
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
