#include "controller/common/money.h"

#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <optional>
#include <random>
#include <string>

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

TEST(Money, ACommaIsNamedNotTakenForTheCurrency) {
  for (std::string_view text : {"40,000 EUR", "1,50 EUR", "40,000"}) {
    Result<Money> m = Money::Parse(text);
    ASSERT_FALSE(m.ok()) << text;
    EXPECT_NE(m.status().message().find("has a comma"), std::string::npos) << m.status().message();
  }
}

TEST(Money, MultipliesByGpuHoursWithoutFloatingPoint) {
  Money price = *Money::Parse("1.10 EUR");
  // 0.1 + 0.2 style errors would show here: 3 GPUs for 20 minutes at 1.10/h = 1.10.
  EXPECT_EQ(price.TimesHours(3, int64_t{20} * 60 * 1000).micros(), 1100000);
  // 1 GPU for 1 ms rounds half away from zero to the micro-unit.
  EXPECT_EQ(price.TimesHours(1, 1).micros(), 0);
  EXPECT_EQ(Money::Parse("3.60 EUR")->TimesHours(1, 1).micros(), 1);
}

TEST(Money, AddsAndPrints) {
  Money a = *Money::Parse("0.10 EUR");
  Money b = *Money::Parse("0.20 EUR");
  EXPECT_EQ(a.Plus(b)->ToString(), "0.30 EUR");
  EXPECT_EQ(Money::Parse("12.345 EUR")->ToString(), "12.345 EUR");
  EXPECT_EQ(Money::Parse("7 EUR")->ToString(), "7.00 EUR");
  EXPECT_EQ(a.Minus(b)->ToString(), "-0.10 EUR");
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

// The input: one micro past INT64_MAX used to wrap to INT64_MIN.
TEST(Money, RangeIsSymmetricAndItsEdgesAreExact) {
  EXPECT_EQ(Money::Parse("9223372036854.775807 EUR")->micros(), INT64_MAX);
  EXPECT_EQ(Money::Parse("9223372036854.775806 EUR")->micros(), INT64_MAX - 1);
  EXPECT_EQ(Money::Parse("-9223372036854.775807 EUR")->micros(), -INT64_MAX);
  EXPECT_EQ(Money::Parse("9223372036854.775807000000 EUR")->micros(), INT64_MAX);
  EXPECT_EQ(Money::Parse("0009223372036854.775807 EUR")->micros(), INT64_MAX);
  EXPECT_EQ(Money::Parse("9223372036854 EUR")->micros(), 9223372036854000000);
  // INT64_MIN is refused too: every parsed amount can be negated.
  for (std::string_view bad :
       {"9223372036854.775808 EUR", "-9223372036854.775808 EUR", "9223372036854.775809 EUR", "9223372036855 EUR",
        "-9223372036855 EUR", "18446744073709.551616 EUR", "99999999999999999999999999999999999999 EUR"}) {
    Result<Money> m = Money::Parse(bad);
    EXPECT_FALSE(m.ok()) << bad << " read as " << m->micros();
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(Money::Parse("9223372036854.775808 EUR").status().message().find("too large"), std::string::npos);
}

TEST(Money, TrailingZerosPastMicrosAreExactOtherDecimalsAreNot) {
  EXPECT_EQ(Money::Parse("1.50000000000000000000 EUR")->micros(), 1500000);
  EXPECT_EQ(Money::Parse("0.0000010 EUR")->micros(), 1);
  EXPECT_FALSE(Money::Parse("0.0000001 EUR").ok());
  EXPECT_FALSE(Money::Parse("1.00000000000000000001 EUR").ok());
  EXPECT_FALSE(Money::Parse("1e3 EUR").ok());  // no exponent in money
  EXPECT_FALSE(Money::Parse("1e-128 EUR").ok());
}

TEST(Money, ArithmeticSaturatesInsteadOfOverflowing) {
  const Money top(INT64_MAX, "EUR");
  const Money bottom(-INT64_MAX, "EUR");
  EXPECT_EQ(top.Plus(Money(1, "EUR"))->micros(), INT64_MAX);
  EXPECT_EQ(bottom.Plus(Money(-1, "EUR"))->micros(), -INT64_MAX);
  EXPECT_EQ(bottom.Minus(top)->micros(), -INT64_MAX);
  EXPECT_EQ(top.Minus(bottom)->micros(), INT64_MAX);
  EXPECT_EQ(Money(INT64_MIN, "EUR").Minus(Money(0, "EUR"))->micros(), -INT64_MAX);
  EXPECT_EQ(Money::SaturatingAdd(-INT64_MAX, -INT64_MAX), -INT64_MAX);
  // Products past 128 bits saturate by their sign.
  EXPECT_EQ(top.TimesHours(INT64_MAX, INT64_MAX).micros(), INT64_MAX);
  EXPECT_EQ(top.TimesHours(-INT64_MAX, INT64_MAX).micros(), -INT64_MAX);
  EXPECT_EQ(bottom.TimesHours(INT64_MIN, INT64_MIN).micros(), -INT64_MAX);
  EXPECT_EQ(Money::GpuMilliHoursMicros(INT64_MAX, INT64_MAX, INT64_MAX), INT64_MAX);
  EXPECT_EQ(Money::GpuMilliHoursMicros(INT64_MIN, INT64_MAX, INT64_MAX), -INT64_MAX);
  EXPECT_EQ(Money::GpuMilliHoursMicros(INT64_MIN, INT64_MIN, INT64_MAX), INT64_MAX);
  EXPECT_EQ(top.TimesMilli(INT64_MAX).micros(), INT64_MAX);
  EXPECT_EQ(top.TimesMilli(INT64_MIN).micros(), -INT64_MAX);
  // Printing INT64_MIN (built from raw micros, never parsed) has a magnitude too.
  EXPECT_EQ(Money(INT64_MIN, "EUR").ToString(), "-9223372036854.775808 EUR");
}

// ---- Property test against an independent reference --------------------------------
// The reference concatenates the whole digits and the first six decimals as one decimal
// string of micro-units and compares it with INT64_MAX as text.

std::optional<int64_t> ReferenceMicros(const std::string& whole, const std::string& fraction) {
  if (fraction.size() > 6 && fraction.find_first_not_of('0', 6) != std::string::npos) return std::nullopt;
  std::string micros =
      whole + (fraction.size() > 6 ? fraction.substr(0, 6) : fraction + std::string(6 - fraction.size(), '0'));
  const size_t nonzero = micros.find_first_not_of('0');
  micros = nonzero == std::string::npos ? "0" : micros.substr(nonzero);
  const std::string kMax = "9223372036854775807";
  if (micros.size() > kMax.size() || (micros.size() == kMax.size() && micros > kMax)) return std::nullopt;
  return std::stoll(micros);
}

std::string MoneyDigits(std::mt19937_64& rng, size_t count) {
  std::string out;
  const int style = static_cast<int>(rng() % 4);  // random, mostly zeros, all zeros, all nines
  for (size_t i = 0; i < count; ++i) {
    const int digit = style == 0   ? static_cast<int>(rng() % 10)
                      : style == 1 ? (rng() % 6 == 0 ? static_cast<int>(rng() % 10) : 0)
                      : style == 2 ? 0
                                   : 9;
    out += static_cast<char>('0' + digit);
  }
  return out;
}

TEST(Money, PropertyParseAgreesWithExactReferenceAndRoundTrips) {
  std::mt19937_64 rng(20261126);
  int accepted = 0, rejected = 0;
  const std::array<std::string, 6> currencies = {"", " EUR", "EUR", "  JPY", " eur", " EURO"};
  for (int i = 0; i < 60000; ++i) {
    const bool negative = rng() % 3 == 0;
    const size_t digit_count = 1 + rng() % 40;
    const size_t whole_count = rng() % (digit_count + 1);
    const std::string whole = MoneyDigits(rng, whole_count);
    const std::string fraction = MoneyDigits(rng, digit_count - whole_count);
    const bool point = !fraction.empty() || rng() % 4 == 0;
    const std::string& currency = currencies[rng() % currencies.size()];
    // An exponent (-400..400) or a second sign is never part of an amount.
    const int garbage = static_cast<int>(rng() % 8);
    std::string text = negative ? "-" : "";
    if (garbage == 1) text += '+';
    text += whole;
    if (point) text += '.';
    text += fraction;
    if (garbage == 0) text += "e" + std::to_string(static_cast<int>(rng() % 801) - 400);
    text += currency;
    const Result<Money> m = Money::Parse(text, "USD");
    std::optional<int64_t> expected;
    const bool valid_currency = currency.empty() || currency == " EUR" || currency == "EUR" || currency == "  JPY";
    if (text.size() <= Money::kMaxTextLength && garbage > 1 && valid_currency) {
      expected = ReferenceMicros(whole, fraction);
      if (expected && negative) *expected = -*expected;
    }
    ASSERT_EQ(m.ok(), expected.has_value())
        << text << ": " << (m.ok() ? std::to_string(m->micros()) : m.status().ToString());
    if (!m.ok()) {
      ++rejected;
      EXPECT_EQ(m.status().code(), StatusCode::kInvalidArgument);
      continue;
    }
    ++accepted;
    ASSERT_EQ(m->micros(), *expected) << text;
    ASSERT_EQ(m->currency(), currency.empty() ? "USD" : currency.substr(currency.find_first_not_of(' '))) << text;
    const Result<Money> again = Money::Parse(m->ToString());
    ASSERT_TRUE(again.ok()) << text << " printed as " << m->ToString();
    ASSERT_EQ(*again, *m) << text << " printed as " << m->ToString();
  }
  EXPECT_GT(accepted, 10000);
  EXPECT_GT(rejected, 10000);
}

// Every amount in range, with its decimals padded by zeros, reads back exactly.
TEST(Money, PropertyEveryRepresentableAmountIsAccepted) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 60000; ++i) {
    const int64_t magnitude = static_cast<int64_t>(rng() >> (1 + rng() % 63));
    const bool negative = rng() % 2 == 0;
    const std::string decimals = std::to_string(magnitude % Money::kMicrosPerUnit);
    const std::string text = std::string(negative ? "-" : "") + std::string(rng() % 8, '0') +
                             std::to_string(magnitude / Money::kMicrosPerUnit) + "." +
                             std::string(6 - decimals.size(), '0') + decimals + std::string(rng() % 20, '0') + " EUR";
    Result<Money> m = Money::Parse(text);
    ASSERT_TRUE(m.ok()) << text << ": " << m.status().ToString();
    ASSERT_EQ(m->micros(), negative ? -magnitude : magnitude) << text;
  }
}

TEST(Money, RefusesArithmeticAndComparisonAcrossCurrencies) {
  const Money eur = *Money::Parse("200 EUR");
  const Money usd = *Money::Parse("168 USD");
  for (const Result<Money>& r : {eur.Plus(usd), eur.Minus(usd), usd.Plus(eur)}) {
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("different currencies"), std::string::npos) << r.status().message();
  }
  const Result<std::strong_ordering> order = usd.Compare(eur);
  ASSERT_FALSE(order.ok());
  EXPECT_NE(order.status().message().find("168.00 USD and 200.00 EUR"), std::string::npos) << order.status().message();
  EXPECT_FALSE(eur == Money(eur.micros(), "USD"));
}

TEST(Money, ConvertsAtAnExactRate) {
  // 168.00 USD at 0.92 EUR per USD; and back, divided, rounded half away from zero.
  EXPECT_EQ(Money::Parse("168 USD")->ConvertedAt(920000000, "EUR").ToString(), "154.56 EUR");
  EXPECT_EQ(Money::Parse("100 EUR")->ConvertedAtInverse(920000000, "USD").micros(), 108695652);
  EXPECT_EQ(Money(-5, "USD").ConvertedAt(500000000, "EUR").micros(), -3);  // -2.5 rounds away from zero
}

TEST(MoneyTotals, KeepsEachCurrencyApart) {
  MoneyTotals totals;
  EXPECT_EQ(totals.ToDisplayString(), "0.00");
  totals.Add(Money());  // an unpriced attempt
  totals.Add(*Money::Parse("10.50 EUR"));
  totals.Add(*Money::Parse("4 USD"));
  totals.Add(*Money::Parse("1.50 EUR"));
  totals.Add(Money());
  EXPECT_EQ(totals.ToDisplayString(), "12.00 EUR + 4.00 USD");
  EXPECT_EQ(totals.DividedBy(4).ToDisplayString(), "3.00 EUR + 1.00 USD");
}

// Property: for amounts in random currencies (none, EUR, USD), Plus, Minus and Compare
// succeed exactly when the currencies agree or one is empty, and then behave as integer
// arithmetic on the micro-units in the non-empty currency; no mix ever yields a number.
TEST(Money, PropertyNoOperationMixesCurrencies) {
  std::mt19937_64 rng(37);
  const std::array<std::string, 3> currencies = {"", "EUR", "USD"};
  int refused = 0;
  for (int i = 0; i < 100000; ++i) {
    const Money a(static_cast<int64_t>(rng() % 2000000000) - 1000000000, currencies[rng() % 3]);
    const Money b(static_cast<int64_t>(rng() % 2000000000) - 1000000000, currencies[rng() % 3]);
    const bool compatible = a.currency().empty() || b.currency().empty() || a.currency() == b.currency();
    const std::string currency = a.currency().empty() ? b.currency() : a.currency();
    const Result<Money> sum = a.Plus(b);
    const Result<Money> difference = a.Minus(b);
    const Result<std::strong_ordering> order = a.Compare(b);
    ASSERT_EQ(sum.ok(), compatible) << a.ToString() << " + " << b.ToString();
    ASSERT_EQ(difference.ok(), compatible) << a.ToString() << " - " << b.ToString();
    ASSERT_EQ(order.ok(), compatible) << a.ToString() << " <=> " << b.ToString();
    ASSERT_EQ(a.SameCurrency(b), compatible);
    if (!compatible) {
      ++refused;
      continue;
    }
    ASSERT_EQ(sum->micros(), a.micros() + b.micros());
    ASSERT_EQ(sum->currency(), currency);
    ASSERT_EQ(*b.Plus(a), Money(sum->micros(), b.currency().empty() ? a.currency() : b.currency()));
    ASSERT_EQ(difference->micros(), a.micros() - b.micros());
    ASSERT_EQ(*order, a.micros() <=> b.micros());
  }
  EXPECT_GT(refused, 10000);
}

}  // namespace
}  // namespace gpufed
