#include "controller/common/money.h"

#include <gtest/gtest.h>

#include <limits>

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

}  // namespace
}  // namespace gpufed
