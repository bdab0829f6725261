#include "controller/common/quantity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <string>

namespace gpufed {
namespace {

int64_t Milli(std::string_view text) {
  Result<Quantity> q = Quantity::Parse(text);
  EXPECT_TRUE(q.ok()) << text << ": " << q.status().ToString();
  return q.ok() ? q->milli() : -1;
}

TEST(Quantity, ParsesKubernetesNotation) {
  EXPECT_EQ(Milli("2"), 2000);
  EXPECT_EQ(Milli("500m"), 500);
  EXPECT_EQ(Milli("1.5"), 1500);
  EXPECT_EQ(Milli("80Gi"), int64_t{80} * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(Milli("4G"), int64_t{4000000000} * 1000);
  EXPECT_EQ(Milli("1Ki"), 1024000);
  EXPECT_EQ(Milli("1e3"), 1000000);
  EXPECT_EQ(Milli("0.5Gi"), int64_t{512} * 1024 * 1024 * 1000);
  EXPECT_EQ(Milli("+3"), 3000);
  EXPECT_EQ(Milli("-1"), -1000);
}

TEST(Quantity, RejectsMalformedText) {
  for (std::string_view bad :
       {"", "Gi", "80GB", "1.2.3", "abc", "1e", "1e400", "99999999999999999999Ei", "0.0001", "80 Gi", "--1"}) {
    EXPECT_FALSE(Quantity::Parse(bad).ok()) << "accepted: " << bad;
  }
}

TEST(Quantity, AFractionIsShownInThousandths) {
  Result<Quantity> eighth = Quantity::Parse("1/8");
  ASSERT_FALSE(eighth.ok());
  EXPECT_NE(eighth.status().message().find("write it in thousandths, 125m for 1/8"), std::string::npos)
      << eighth.status().message();
  EXPECT_NE(Quantity::Parse("3/4").status().message().find("750m for 3/4"), std::string::npos);
  EXPECT_NE(Quantity::Parse("1.5/2").status().message().find("is a fraction"), std::string::npos);
  EXPECT_NE(Quantity::Parse("1/0").status().message().find("is a fraction"), std::string::npos);
}

TEST(Quantity, RejectsValuesBeyondRange) {
  EXPECT_FALSE(Quantity::Parse("16Ei").ok());
  EXPECT_EQ(Quantity::Parse("9000Pi").status().code(), StatusCode::kInvalidArgument);
}

TEST(Quantity, PrintsCanonicalText) {
  EXPECT_EQ(Quantity::Parse("80Gi")->ToString(), "80Gi");
  EXPECT_EQ(Quantity::Parse("500m")->ToString(), "500m");
  EXPECT_EQ(Quantity::Parse("32")->ToString(), "32");
  EXPECT_EQ(Quantity::Parse("1536Mi")->ToString(), "1536Mi");
}

TEST(Quantity, RoundsUnitsUp) {
  EXPECT_EQ(Quantity::Parse("500m")->units_ceil(), 1);
  EXPECT_EQ(Quantity::Parse("2")->units_ceil(), 2);
}

// The inputs: an exponent that made the divisor overflow to zero (SIGFPE in
// `gpufed validate`), and its neighbours on both sides of every bound.
TEST(Quantity, ExtremeExponentsAreErrorsNotCrashes) {
  for (std::string_view bad : {"1e-128", "1e-400", "-1e-400", "1e400", "1E400", "-1e400", "1e-19", "1e-4", "0.5e-3",
                               "1e16", "1e19", "9.223372036854775808e15", "1e99999999999999999999",
                               "1e-99999999999999999999", "1e-2147483648", "1e2147483648", "100000e-400000"}) {
    Result<Quantity> q = Quantity::Parse(bad);
    EXPECT_FALSE(q.ok()) << bad << " read as " << q->milli();
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(Milli("1e-3"), 1);
  EXPECT_EQ(Milli("1e-0"), 1000);
  EXPECT_EQ(Milli("1e+3"), 1000000);
  EXPECT_EQ(Milli("1e15"), 1000000000000000000);
  EXPECT_EQ(Milli("9.223372036854775807e15"), INT64_MAX);
  EXPECT_EQ(Milli("-9.223372036854775807e15"), -INT64_MAX);
  EXPECT_EQ(Milli("0e400"), 0);
  EXPECT_EQ(Milli("0e-400"), 0);
  EXPECT_EQ(Milli("0.000e99999999999999999999"), 0);
}

TEST(Quantity, RangeIsSymmetricAroundZero) {
  EXPECT_EQ(Milli("9223372036854775807m"), INT64_MAX);
  EXPECT_EQ(Milli("-9223372036854775807m"), -INT64_MAX);
  EXPECT_EQ(Milli("9223372036854775.807"), INT64_MAX);
  EXPECT_EQ(Milli("9223372036854775806m"), INT64_MAX - 1);
  for (std::string_view bad :
       {"9223372036854775808m", "-9223372036854775808m", "9223372036854775.808", "-9223372036854775.8075",
        "18446744073709551616m", "8Ei", "8.2Pi", "9.224P", "0.01E", "8389Ti", "1Ei"}) {
    EXPECT_FALSE(Quantity::Parse(bad).ok()) << bad;
  }
  // The largest amounts each suffix can carry.
  EXPECT_EQ(Milli("8388Ti"), int64_t{8388} * (int64_t{1} << 40) * 1000);
  EXPECT_EQ(Milli("8Pi"), int64_t{8} * (int64_t{1} << 50) * 1000);
  EXPECT_EQ(Milli("0.0078125Ei"), (int64_t{1} << 53) * 1000);  // 2^-7 Ei
  EXPECT_EQ(Milli("9.223P"), 9223000000000000000);
  EXPECT_EQ(Milli("9.223372036854775807P"), INT64_MAX);
  EXPECT_EQ(Milli("0.009223372036854775807E"), INT64_MAX);
}

// Kubernetes rounds amounts finer than its resolution up; Parse rounds sub-milli digits
// up (away from zero) for amounts of at least 1m and refuses smaller non-zero amounts.
TEST(Quantity, SubMilliDigitsRoundAwayFromZero) {
  EXPECT_EQ(Milli("1.0001"), 1001);
  EXPECT_EQ(Milli("1.0000000000000000000000000000000000000001"), 1001);
  EXPECT_EQ(Milli("-1.0001"), -1001);
  EXPECT_EQ(Milli("1.5m"), 2);
  EXPECT_EQ(Milli("1.0000001Gi"), 1073741931375);  // 1073741931374.1824m
  EXPECT_EQ(Milli("0.001"), 1);
  EXPECT_EQ(Milli("0.0010000"), 1);
  EXPECT_EQ(Milli("0.5Ki"), 512000);  // exact: never changed
  EXPECT_EQ(Milli("9223372036854775.8069"), INT64_MAX);
  EXPECT_FALSE(Quantity::Parse("9223372036854775.8071").ok());  // rounds past the top
  for (std::string_view below : {"0.0001", "0.0009999", "0.5m", "-0.5m", "1e-128", "0.000000001Ki"}) {
    Result<Quantity> q = Quantity::Parse(below);
    ASSERT_FALSE(q.ok()) << below;
    EXPECT_NE(q.status().message().find("below 1m"), std::string::npos) << q.status().message();
  }
}

TEST(Quantity, ArithmeticSaturatesInsteadOfOverflowing) {
  const Quantity top = Quantity::FromMilli(INT64_MAX);
  const Quantity bottom = Quantity::FromMilli(-INT64_MAX);
  EXPECT_EQ((top + Quantity::FromMilli(1)).milli(), INT64_MAX);
  EXPECT_EQ((bottom - Quantity::FromMilli(1)).milli(), -INT64_MAX);
  EXPECT_EQ((bottom - top).milli(), -INT64_MAX);
  EXPECT_EQ((Quantity() - bottom).milli(), INT64_MAX);
  EXPECT_EQ(Quantity::FromUnits(INT64_MAX / 999).milli(), INT64_MAX);
  EXPECT_EQ(Quantity::FromUnits(INT64_MIN).milli(), -INT64_MAX);
  EXPECT_EQ(top.units_ceil(), INT64_MAX / 1000 + 1);
  EXPECT_EQ(Quantity::FromMilli(-500).units_ceil(), 0);
  EXPECT_EQ(Quantity::FromMilli(-1500).units_ceil(), -1);
}

// ---- Property test against an independent reference --------------------------------
// The reference works on decimal strings of any length: the text's digits as one
// integer, times 2^binary, times 10^shift, then split into whole milli-units and the
// rest. It shares nothing with Parse's fixed-width arithmetic.

// The parts one after another (test texts are built from many).
template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string out;
  (out += ... += parts);
  return out;
}

std::string StripLeadingZeros(const std::string& s) {
  const size_t nonzero = s.find_first_not_of('0');
  return nonzero == std::string::npos ? "0" : s.substr(nonzero);
}

std::string TimesTwo(const std::string& digits) {
  std::string out(digits.size() + 1, '0');
  int carry = 0;
  for (size_t i = digits.size(); i > 0; --i) {
    const int t = (digits[i - 1] - '0') * 2 + carry;
    out[i] = static_cast<char>('0' + t % 10);
    carry = t / 10;
  }
  out[0] = static_cast<char>('0' + carry);
  return out;
}

std::string PlusOne(std::string digits) {
  for (size_t i = digits.size(); i > 0; --i) {
    if (digits[i - 1] != '9') {
      ++digits[i - 1];
      return digits;
    }
    digits[i - 1] = '0';
  }
  return "1" + digits;
}

// Milli-units of |number| if representable after the documented rounding; nullopt if not.
std::optional<int64_t> ReferenceMilli(const std::string& whole, const std::string& fraction, int exponent,
                                      int decimal_suffix, int binary_suffix) {
  std::string n = whole + fraction;
  for (int i = 0; i < binary_suffix; ++i) n = TimesTwo(n);
  const int shift = 3 + exponent + decimal_suffix - static_cast<int>(fraction.size());
  std::string integer, rest;
  if (shift >= 0) {
    integer = n + std::string(static_cast<size_t>(shift), '0');
  } else {
    const size_t cut = static_cast<size_t>(-shift);
    if (n.size() < cut) n.insert(0, cut - n.size(), '0');
    integer = n.substr(0, n.size() - cut);
    rest = n.substr(n.size() - cut);
  }
  integer = StripLeadingZeros(integer);
  const bool exact = rest.find_first_not_of('0') == std::string::npos;
  if (!exact) {
    if (integer == "0") return std::nullopt;  // non-zero, below 1m
    integer = PlusOne(integer);
  }
  const std::string kMax = "9223372036854775807";
  if (integer.size() > kMax.size() || (integer.size() == kMax.size() && integer > kMax)) return std::nullopt;
  return std::stoll(integer);
}

struct SuffixCase {
  std::string text;
  int decimal, binary;
};
const std::array<SuffixCase, 14> kSuffixCases = {{{"", 0, 0},
                                                  {"m", -3, 0},
                                                  {"k", 3, 0},
                                                  {"M", 6, 0},
                                                  {"G", 9, 0},
                                                  {"T", 12, 0},
                                                  {"P", 15, 0},
                                                  {"E", 18, 0},
                                                  {"Ki", 0, 10},
                                                  {"Mi", 0, 20},
                                                  {"Gi", 0, 30},
                                                  {"Ti", 0, 40},
                                                  {"Pi", 0, 50},
                                                  {"Ei", 0, 60}}};

std::string RandomDigits(std::mt19937_64& rng, size_t count) {
  std::string out;
  const int style = static_cast<int>(rng() % 4);  // random, many zeros, all zeros, all nines
  for (size_t i = 0; i < count; ++i) {
    const int digit = style == 0   ? static_cast<int>(rng() % 10)
                      : style == 1 ? (rng() % 5 == 0 ? static_cast<int>(rng() % 10) : 0)
                      : style == 2 ? 0
                                   : 9;
    out += static_cast<char>('0' + digit);
  }
  return out;
}

TEST(Quantity, PropertyParseAgreesWithExactReferenceAndRoundTrips) {
  std::mt19937_64 rng(20261125);
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 60000; ++i) {
    const std::string sign = std::array<std::string, 3>{"", "+", "-"}[rng() % 3];
    const size_t digit_count = 1 + rng() % 40;
    const size_t whole_count = rng() % (digit_count + 1);
    const std::string whole = RandomDigits(rng, whole_count);
    const std::string fraction = RandomDigits(rng, digit_count - whole_count);
    const bool point = !fraction.empty() || rng() % 4 == 0;
    std::string text = Cat(sign, whole, point ? "." : "", fraction);
    int exponent = 0;
    const SuffixCase* suffix = &kSuffixCases[0];
    if (rng() % 3 == 0) {
      exponent = static_cast<int>(rng() % 801) - 400;
      text += rng() % 2 == 0 ? "e" : "E";
      if (exponent >= 0 && rng() % 2 == 0) text += '+';
      text += std::to_string(exponent);
    } else {
      suffix = &kSuffixCases[rng() % kSuffixCases.size()];
      text += suffix->text;
    }
    const Result<Quantity> q = Quantity::Parse(text);
    std::optional<int64_t> expected;
    if (text.size() <= Quantity::kMaxTextLength) {
      expected = ReferenceMilli(whole, fraction, exponent, suffix->decimal, suffix->binary);
      if (expected && sign == "-") *expected = -*expected;
    }
    ASSERT_EQ(q.ok(), expected.has_value())
        << text << ": " << (q.ok() ? std::to_string(q->milli()) : q.status().ToString());
    if (!q.ok()) {
      ++rejected;
      EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
      continue;
    }
    ++accepted;
    ASSERT_EQ(q->milli(), *expected) << text;
    ASSERT_NE(q->milli(), INT64_MIN) << text;
    const Result<Quantity> again = Quantity::Parse(q->ToString());
    ASSERT_TRUE(again.ok()) << text << " printed as " << q->ToString();
    ASSERT_EQ(again->milli(), q->milli()) << text << " printed as " << q->ToString();
  }
  // Both outcomes are common, so neither side of the property is vacuous.
  EXPECT_GT(accepted, 10000);
  EXPECT_GT(rejected, 10000);
}

// Every milli-unit amount in range, written in any of the grammar's notations, reads
// back exactly.
TEST(Quantity, PropertyEveryRepresentableAmountIsAccepted) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 60000; ++i) {
    const int64_t magnitude = static_cast<int64_t>(rng() >> (1 + rng() % 63));
    const int64_t milli = rng() % 2 == 0 ? magnitude : -magnitude;
    const std::string sign = milli < 0 ? "-" : (rng() % 4 == 0 ? "+" : "");
    const std::string digits = std::to_string(magnitude);
    // value = <digits> x 10^-3 units = (<digits> x 10^k) x 10^(-3-k): the point moved by
    // k places and an exponent that moves it back, padded with zeros on either side.
    const int k = static_cast<int>(rng() % (digits.size() + 40)) - static_cast<int>(digits.size()) - 20;
    const std::string pad_left(rng() % 8, '0'), pad_right(rng() % 8, '0');
    std::string shifted;
    if (k >= 0) {
      shifted = Cat(digits, std::string(static_cast<size_t>(k), '0'), ".", pad_right);
    } else if (static_cast<int>(digits.size()) + k > 0) {
      const size_t point = digits.size() - static_cast<size_t>(-k);
      shifted = Cat(digits.substr(0, point), ".", digits.substr(point), pad_right);
    } else {
      shifted = Cat("0.", std::string(static_cast<size_t>(-k) - digits.size(), '0'), digits, pad_right);
    }
    const std::string exponent = std::to_string(-3 - k);
    const std::string fraction = std::to_string(magnitude % 1000);
    for (const std::string& text : {Cat(sign, pad_left, digits, "m"), Cat(sign, pad_left, shifted, "e", exponent),
                                    Cat(sign, pad_left, shifted, "E", exponent),
                                    Cat(sign, std::to_string(magnitude / 1000), ".",
                                        std::string(3 - fraction.size(), '0'), fraction, pad_right)}) {
      Result<Quantity> q = Quantity::Parse(text);
      ASSERT_TRUE(q.ok()) << text << ": " << q.status().ToString();
      ASSERT_EQ(q->milli(), milli) << text;
    }
    // Binary suffixes, where the amount is a whole multiple of one.
    for (size_t s = 8; s < kSuffixCases.size(); ++s) {
      const int64_t unit = int64_t{1000} << kSuffixCases[s].binary;
      if (magnitude % unit != 0) break;
      const std::string text = Cat(sign, std::to_string(magnitude / unit), kSuffixCases[s].text);
      Result<Quantity> q = Quantity::Parse(text);
      ASSERT_TRUE(q.ok()) << text << ": " << q.status().ToString();
      ASSERT_EQ(q->milli(), milli) << text;
    }
  }
}

}  // namespace
}  // namespace gpufed
