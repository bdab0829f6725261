#include "controller/model/exchange_rates.h"

#include <gtest/gtest.h>

namespace gpufed::model {
namespace {

ExchangeRates UsdToEur(const char* rate = "0.92") {
  ExchangeRates r;
  r.metadata.name = "ecb";
  r.as_of = "2026-11-02";
  r.rates.push_back({"USD", "EUR", *ParseRateNanos(rate), {}});
  return r;
}

TEST(ExchangeRates, ParsesExactDecimalRates) {
  EXPECT_EQ(*ParseRateNanos("0.92"), 920000000);
  EXPECT_EQ(*ParseRateNanos("163.25"), 163250000000);
  EXPECT_EQ(*ParseRateNanos("0.000000001"), 1);
  EXPECT_EQ(*ParseRateNanos("1"), kRateNanosPerUnit);
  for (const char* bad : {"", "0", "0.0", "-1", "1e3", "0.9234567891", "1,05", ".", "abc", "1000000001"}) {
    EXPECT_FALSE(ParseRateNanos(bad).ok()) << bad;
  }
  EXPECT_EQ(RateText(920000000), "0.92");
  EXPECT_EQ(RateText(1051230000), "1.05123");
  EXPECT_EQ(RateText(kRateNanosPerUnit * 3), "3.00");
}

TEST(CurrencyConverter, ConvertsBothWaysThroughOneDeclaredPair) {
  const CurrencyConverter rates({UsdToEur()});
  std::vector<AppliedRate> used;
  Result<Money> eur = rates.Convert(*Money::Parse("168.00 USD"), "EUR", &used);
  ASSERT_TRUE(eur.ok());
  EXPECT_EQ(eur->ToString(), "154.56 EUR");
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(used[0], (AppliedRate{"USD", "EUR", "0.92", "2026-11-02", "ecb"}));
  // The other way divides, rounded half away from zero to the micro-unit.
  Result<Money> usd = rates.Convert(*Money::Parse("100.00 EUR"), "USD", &used);
  ASSERT_TRUE(usd.ok());
  EXPECT_EQ(usd->micros(), 108695652);  // 100 / 0.92 = 108.6956521...
  EXPECT_EQ(usd->currency(), "USD");
  EXPECT_EQ(used.size(), 1u) << "one pair, recorded once";
}

TEST(CurrencyConverter, SameOrNoCurrencyNeedsNoRate) {
  const CurrencyConverter none;
  EXPECT_EQ(*none.Convert(*Money::Parse("5 EUR"), "EUR"), *Money::Parse("5 EUR"));
  EXPECT_EQ(none.Convert(Money(5, ""), "EUR")->currency(), "EUR");
  EXPECT_EQ(none.Convert(*Money::Parse("5 USD"), "")->currency(), "USD");
  EXPECT_TRUE(none.CanConvert("EUR", "EUR"));
}

TEST(CurrencyConverter, RefusesAPairWithoutARateNamingIt) {
  const CurrencyConverter rates({UsdToEur()});
  Result<Money> chf = rates.Convert(*Money::Parse("10 USD"), "CHF");
  ASSERT_FALSE(chf.ok());
  EXPECT_NE(chf.status().message().find("no exchange rate from USD to CHF"), std::string::npos);
  EXPECT_FALSE(rates.CanConvert("USD", "CHF"));
  EXPECT_TRUE(rates.CanConvert("EUR", "USD"));
}

TEST(CurrencyConverter, ViewRatesReachEveryDeclaredCurrency) {
  const CurrencyConverter rates({UsdToEur("0.8")});
  const std::map<std::string, double> from_usd = rates.RatesFrom("USD");
  EXPECT_DOUBLE_EQ(from_usd.at("USD"), 1.0);
  EXPECT_DOUBLE_EQ(from_usd.at("EUR"), 0.8);
  EXPECT_DOUBLE_EQ(rates.RatesFrom("EUR").at("USD"), 1.25);
  EXPECT_EQ(rates.RatesFrom("CHF").size(), 1u);
}

}  // namespace
}  // namespace gpufed::model
