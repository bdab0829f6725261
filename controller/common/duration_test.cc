#include "controller/common/duration.h"

#include <gtest/gtest.h>

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

TEST(Duration, PrintsShortestText) {
  EXPECT_EQ(Duration::FromSeconds(90).ToString(), "1m30s");
  EXPECT_EQ(Duration::FromSeconds(6 * 3600).ToString(), "6h");
  EXPECT_EQ(Duration::FromMillis(500).ToString(), "500ms");
  EXPECT_EQ(Duration().ToString(), "0s");
}

}  // namespace
}  // namespace gpufed
