#include "controller/common/duration.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace gpufed {
namespace {

TEST(Duration, ParsesUnitsAndSums) {
  EXPECT_EQ(Duration::Parse("90s")->millis(), 90000);
  EXPECT_EQ(Duration::Parse("6h")->millis(), 6 * 3600000);
  EXPECT_EQ(Duration::Parse("1h30m")->millis(), 5400000);
  EXPECT_EQ(Duration::Parse("500ms")->millis(), 500);
  EXPECT_EQ(Duration::Parse("2d")->millis(), 2 * 86400000);
  EXPECT_EQ(Duration::Parse("0")->millis(), 0);
  EXPECT_EQ(Duration::Parse("0s")->millis(), 0);
}

TEST(Duration, RejectsBadText) {
  for (std::string_view bad : {"", "6", "h", "-5s", "5x", "1.5h", "99999999999999999h", "s5"}) {
    EXPECT_FALSE(Duration::Parse(bad).ok()) << bad;
  }
}

TEST(Duration, AUnitSpelledOutIsShownHowToWriteIt) {
  for (auto [text, hint] : {std::pair{"18 hours", "write 18h"},
                            {"18hours", "write 18h"},
                            {"30 Minutes", "write 30m"},
                            {"2 days", "write 2d"},
                            {"500 msec", "write 500ms"},
                            {"1 hour", "write 1h"}}) {
    Result<Duration> d = Duration::Parse(text);
    ASSERT_FALSE(d.ok()) << text;
    EXPECT_NE(d.status().message().find(hint), std::string::npos) << d.status().message();
  }
  EXPECT_NE(Duration::Parse("5 fortnights").status().message().find("needs a unit (ms, s, m, h, d)"),
            std::string::npos);
}

TEST(Duration, PrintsShortestText) {
  EXPECT_EQ(Duration::FromSeconds(90).ToString(), "1m30s");
  EXPECT_EQ(Duration::FromSeconds(int64_t{6} * 3600).ToString(), "6h");
  EXPECT_EQ(Duration::FromMillis(500).ToString(), "500ms");
  EXPECT_EQ(Duration().ToString(), "0s");
}

TEST(Duration, RangeEndsAtACenturyAndNothingWraps) {
  EXPECT_EQ(Duration::Parse("876000h")->millis(), Duration::kMaxMillis);
  EXPECT_EQ(Duration::Parse("875999h59m59s999ms")->millis(), Duration::kMaxMillis - 1);
  EXPECT_EQ(Duration::Parse("3153600000000ms")->millis(), Duration::kMaxMillis);
  EXPECT_EQ(Duration::Parse("00000000000000000000000000000000000001s")->millis(), 1000);
  for (std::string_view bad : {"876000h1ms", "3153600000001ms", "36501d", "9223372036854775807ms",
                               "9223372036854775808s", "99999999999999999999999999999999999999h", "876000h876000h",
                               "1e-128s", "1e400s", "1e3s", "+5s", "-0s", "1.5h", "0.5s"}) {
    Result<Duration> d = Duration::Parse(bad);
    EXPECT_FALSE(d.ok()) << bad << " read as " << d->millis();
    EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_NE(Duration::Parse("1.5h").status().message().find("1h30m"), std::string::npos);
}

TEST(Duration, ArithmeticSaturatesInsteadOfOverflowing) {
  EXPECT_EQ(Duration::FromSeconds(INT64_MAX).millis(), INT64_MAX);
  EXPECT_EQ(Duration::FromSeconds(INT64_MIN).millis(), -INT64_MAX);
  EXPECT_EQ((Duration::FromMillis(INT64_MAX) + Duration::FromMillis(1)).millis(), INT64_MAX);
  EXPECT_EQ((Duration::FromMillis(-INT64_MAX) + Duration::FromMillis(-2)).millis(), -INT64_MAX);
}

// ---- Property test against an independent reference --------------------------------
// Terms of any digits and a unit; the reference sums them in 128 bits from the digit
// strings (a term of more than 20 significant digits is out of range on its own).

struct Term {
  std::string digits;
  std::string unit;
};

std::optional<int64_t> ReferenceMillis(const std::vector<Term>& terms) {
  unsigned __int128 total = 0;
  for (const Term& t : terms) {
    const size_t nonzero = t.digits.find_first_not_of('0');
    const std::string significant = nonzero == std::string::npos ? "0" : t.digits.substr(nonzero);
    if (significant.size() > 20) return std::nullopt;
    unsigned __int128 amount = 0;
    for (char ch : significant) amount = amount * 10 + static_cast<unsigned>(ch - '0');
    const int64_t per = t.unit == "ms"  ? 1
                        : t.unit == "s" ? 1000
                        : t.unit == "m" ? 60000
                        : t.unit == "h" ? 3600000
                                        : 86400000;
    total += amount * static_cast<unsigned __int128>(per);
    if (total > static_cast<unsigned __int128>(Duration::kMaxMillis)) return std::nullopt;
  }
  return static_cast<int64_t>(total);
}

TEST(Duration, PropertyParseAgreesWithReferenceAndRoundTrips) {
  std::mt19937_64 rng(20261127);
  const std::array<std::string, 5> units = {"ms", "s", "m", "h", "d"};
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 60000; ++i) {
    std::vector<Term> terms(1 + rng() % 4);
    std::string text;
    for (Term& t : terms) {
      const size_t digit_count = 1 + rng() % 40;
      const size_t significant = rng() % 3 == 0 ? digit_count : rng() % std::min<size_t>(digit_count, 8);
      t.digits = std::string(digit_count - significant, '0');
      for (size_t d = 0; d < significant; ++d) t.digits += static_cast<char>('0' + rng() % 10);
      t.unit = units[rng() % units.size()];
      text += t.digits;
      text += t.unit;
    }
    // A sign, a fraction or an exponent (-400..400) is never part of a duration.
    const int garbage = static_cast<int>(rng() % 10);
    if (garbage == 0) text.insert(0, 1, '-');
    if (garbage == 1) text.insert(terms[0].digits.size(), "." + std::to_string(rng() % 100));
    if (garbage == 2) text.insert(terms[0].digits.size(), "e" + std::to_string(static_cast<int>(rng() % 801) - 400));
    const Result<Duration> d = Duration::Parse(text);
    std::optional<int64_t> expected;
    if (garbage > 2 && text.size() <= Duration::kMaxTextLength) expected = ReferenceMillis(terms);
    ASSERT_EQ(d.ok(), expected.has_value())
        << text << ": " << (d.ok() ? std::to_string(d->millis()) : d.status().ToString());
    if (!d.ok()) {
      ++rejected;
      EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
      continue;
    }
    ++accepted;
    ASSERT_EQ(d->millis(), *expected) << text;
    const Result<Duration> again = Duration::Parse(d->ToString());
    ASSERT_TRUE(again.ok()) << text << " printed as " << d->ToString();
    ASSERT_EQ(again->millis(), d->millis()) << text << " printed as " << d->ToString();
  }
  EXPECT_GT(accepted, 10000);
  EXPECT_GT(rejected, 10000);
}

// Every duration in range reads back from its own text and from plain milliseconds.
TEST(Duration, PropertyEveryRepresentableDurationIsAccepted) {
  std::mt19937_64 rng(13);
  for (int i = 0; i < 60000; ++i) {
    const uint64_t span = static_cast<uint64_t>(Duration::kMaxMillis) + 1;
    const int64_t millis = static_cast<int64_t>((rng() % span) >> (rng() % 42));
    for (const std::string& text : {Duration::FromMillis(millis).ToString(), std::to_string(millis) + "ms",
                                    std::string(rng() % 20, '0') + std::to_string(millis) + "ms"}) {
      Result<Duration> d = Duration::Parse(text);
      ASSERT_TRUE(d.ok()) << text << ": " << d.status().ToString();
      ASSERT_EQ(d->millis(), millis) << text;
    }
  }
}

}  // namespace
}  // namespace gpufed
