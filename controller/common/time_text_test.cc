#include "controller/common/time_text.h"

#include <gtest/gtest.h>

namespace gpufed {
namespace {

TEST(TimeText, ControllerTimesReadAsWallOrSimulatedTime) {
  // A simulated run: hours past 24, since its start.
  EXPECT_EQ(FormatControllerMillis(0), "+00:00:00");
  EXPECT_EQ(FormatControllerMillis(26 * 3600000 + 15 * 60000 + 7000), "+26:15:07");
  EXPECT_EQ(FormatControllerMillis(1250), "+00:00:01.250");
  // The wall clock: RFC 3339 UTC to the second, never a duration since 1970.
  EXPECT_EQ(FormatControllerMillis(int64_t{1795737600} * 1000 + 999), "2026-11-27T00:00:00Z");
  EXPECT_EQ(FormatControllerMillis(kVirtualClockLimitMillis), "2001-09-09T01:46:40Z");
}

TEST(TimeText, RoundTripsTheJournalForm) {
  const int64_t micros = int64_t{1795737600} * 1000000 + 123456;
  EXPECT_EQ(FormatTimeMicros(micros), "2026-11-27T00:00:00.123456Z");
  EXPECT_EQ(ParseTimeMicros(FormatTimeMicros(micros)), micros);
  EXPECT_EQ(ParseTimeMicros("2026-11-27"), int64_t{1795737600} * 1000000);
  EXPECT_FALSE(ParseTimeMicros("27/11/2026").has_value());
}

}  // namespace
}  // namespace gpufed
