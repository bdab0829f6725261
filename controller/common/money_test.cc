#include "controller/common/money.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace gpufed {
namespace {

TEST(Money, ParsesExactDecimals) {
  Result<Money> m = Money::Parse("400.00 EUR");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->micros(), 400000000);
  EXPECT_EQ(m->currency(), "EUR");
  EXPECT_EQ(Money::Parse("1.10", "USD")->micros(), 1100000);
  EXPECT_EQ(Money::Parse("1.10", "USD")->currency(), "USD");
  EXPECT_EQ(Money::Parse("0.000001 EUR")->micros(), 1);
}

TEST(Money, RejectsBadText) {
  for (std::string_view bad : {"", "EUR", "1.0000001 EUR", "12 eur", "12 EURO", "1,50 EUR", "99999999999999 EUR"}) {
    EXPECT_FALSE(Money::Parse(bad).ok()) << bad;
  }
}

TEST(Money, MultipliesByGpuHoursWithoutFloatingPoint) {
  Money price = *Money::Parse("1.10 EUR");
  // 0.1 + 0.2 style errors would show here: 3 GPUs for 20 minutes at 1.10/h = 1.10.
  EXPECT_EQ(price.TimesHours(3, 20 * 60 * 1000).micros(), 1100000);
  // 1 GPU for 1 ms rounds half away from zero to the micro-unit.
  EXPECT_EQ(price.TimesHours(1, 1).micros(), 0);
  EXPECT_EQ(Money::Parse("3.60 EUR")->TimesHours(1, 1).micros(), 1);
}

TEST(Money, AddsAndPrints) {
  Money a = *Money::Parse("0.10 EUR");
  Money b = *Money::Parse("0.20 EUR");
  EXPECT_EQ(a.Plus(b).ToString(), "0.30 EUR");
  EXPECT_EQ(Money::Parse("12.345 EUR")->ToString(), "12.345 EUR");
  EXPECT_EQ(Money::Parse("7 EUR")->ToString(), "7.00 EUR");
  EXPECT_EQ(a.Minus(b).ToString(), "-0.10 EUR");
}

TEST(Money, DisplaysMinorUnitsWithThousandsSeparators) {
  EXPECT_EQ(Money::Parse("19652.5444 EUR")->ToDisplayString(), "19,652.54 EUR");
  EXPECT_EQ(Money::Parse("0.1988 EUR")->ToDisplayString(), "0.20 EUR");
  EXPECT_EQ(Money::Parse("7 EUR")->ToDisplayString(), "7.00 EUR");
  EXPECT_EQ(Money::Parse("999.995 USD")->ToDisplayString(), "1,000.00 USD");
  EXPECT_EQ(Money::Parse("100000 EUR")->ToDisplayString(), "100,000.00 EUR");
  EXPECT_EQ(Money::Parse("1234567.891 EUR")->ToDisplayString(), "1,234,567.89 EUR");
  EXPECT_EQ(Money(0, "EUR").ToDisplayString(), "0.00 EUR");
  EXPECT_EQ(Money(1234500000, "").ToDisplayString(), "1,234.50");
}

TEST(Money, DisplayRoundsHalfAwayFromZero) {
  EXPECT_EQ(Money::Parse("0.005 EUR")->ToDisplayString(), "0.01 EUR");
  EXPECT_EQ(Money::Parse("0.004999 EUR")->ToDisplayString(), "0.00 EUR");
  EXPECT_EQ(Money::Parse("-0.005 EUR")->ToDisplayString(), "-0.01 EUR");
  EXPECT_EQ(Money::Parse("-1234.565 EUR")->ToDisplayString(), "-1,234.57 EUR");
  // Rounds to zero: no negative zero.
  EXPECT_EQ(Money::Parse("-0.004 EUR")->ToDisplayString(), "0.00 EUR");
}

TEST(Money, DisplayUsesEachCurrencysMinorUnit) {
  EXPECT_EQ(Money::MinorUnitDigits("EUR"), 2);
  EXPECT_EQ(Money::MinorUnitDigits("JPY"), 0);
  EXPECT_EQ(Money::MinorUnitDigits("KWD"), 3);
  EXPECT_EQ(Money::Parse("1234567.5 JPY")->ToDisplayString(), "1,234,568 JPY");
  EXPECT_EQ(Money::Parse("-1499.5 JPY")->ToDisplayString(), "-1,500 JPY");
  EXPECT_EQ(Money::Parse("1234.5675 KWD")->ToDisplayString(), "1,234.568 KWD");
  EXPECT_EQ(Money::Parse("12.3 CHF")->ToDisplayString(), "12.30 CHF");
}

TEST(Money, DisplaysTheLargestAmounts) {
  EXPECT_EQ(Money(std::numeric_limits<int64_t>::max(), "EUR").ToDisplayString(), "9,223,372,036,854.78 EUR");
  EXPECT_EQ(Money(std::numeric_limits<int64_t>::min(), "EUR").ToDisplayString(), "-9,223,372,036,854.78 EUR");
  EXPECT_EQ(Money(std::numeric_limits<int64_t>::max(), "JPY").ToDisplayString(), "9,223,372,036,855 JPY");
}

// The products of price, GPU share and time, on both sides of where 64 bits no longer
// hold them, round half away from zero exactly as a 128-bit reference does.
TEST(Money, GpuHoursRoundTheSameAtEveryMagnitude) {
  auto reference = [](int64_t price, int64_t milli, int64_t millis) {
    const __int128 n = static_cast<__int128>(price) * milli * millis;
    const __int128 d = __int128{3600000} * 1000;
    __int128 q = n >= 0 ? (n + d / 2) / d : (n - d / 2) / d;
    const __int128 top = std::numeric_limits<int64_t>::max();
    return static_cast<int64_t>(q > top ? top : q < -top ? -top : q);
  };
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200000; ++i) {
    // Below 2^62 x 2^31 x 2^32, so the 128-bit product never overflows.
    const int64_t price = static_cast<int64_t>(rng() >> (1 + rng() % 63)) * (rng() % 4 == 0 ? -1 : 1);
    const int64_t milli = static_cast<int64_t>(rng() >> (33 + rng() % 31));
    const int64_t millis = static_cast<int64_t>(rng() >> (32 + rng() % 32));
    ASSERT_EQ(Money::GpuMilliHoursMicros(price, milli, millis), reference(price, milli, millis))
        << price << " x " << milli << " x " << millis;
  }
  EXPECT_EQ(Money::GpuMilliHoursMicros(1800, 1000, 1000), 1);   // half a micro rounds up
  EXPECT_EQ(Money::GpuMilliHoursMicros(-1800, 1000, 1000), -1);  // and away from zero
  EXPECT_EQ(Money::GpuMilliHoursMicros(1799, 1000, 1000), 0);
}

}  // namespace
}  // namespace gpufed
