#include "controller/audit/record_time.h"

#include <gtest/gtest.h>

namespace gpufed::audit {
namespace {

nlohmann::json Decision(int64_t decided_at_millis, const std::string& time = "2026-11-23T22:31:48.000000Z") {
  return {{"kind", "decision"}, {"time", time}, {"decidedAtMillis", decided_at_millis}};
}

TEST(RecordTime, FormatsVirtualTimeLikeTheRunView) {
  EXPECT_EQ(FormatVirtualMillis(0), "+00:00:00");
  EXPECT_EQ(FormatVirtualMillis(26 * 3600000 + 15 * 60000), "+26:15:00");
  EXPECT_EQ(FormatVirtualMillis(1250), "+00:00:01.250");
}

TEST(RecordTime, SimulatedRunsShowTheControllerClockAndCarryItForward) {
  RecordTimeline timeline;
  // Before the first record with a controller time: the commit time.
  RecordTime start = timeline.Next({{"kind", "controller-start"}, {"time", "2026-11-23T22:31:48.000000Z"}});
  EXPECT_FALSE(start.is_virtual);
  EXPECT_EQ(start.text, "2026-11-23T22:31:48.000000Z");
  EXPECT_EQ(start.day, "2026-11-23");

  RecordTime decided = timeline.Next(Decision(int64_t{2} * 3600000));
  EXPECT_TRUE(decided.is_virtual);
  EXPECT_EQ(decided.text, "+02:00:00");
  EXPECT_EQ(decided.micros, int64_t{2} * 3600000 * 1000);
  EXPECT_EQ(decided.day, "day 1");

  // A connector action has no clock of its own: its pass's time.
  RecordTime action = timeline.Next({{"kind", "connector-action"}, {"time", "2026-11-23T22:31:48.100000Z"}});
  EXPECT_EQ(action.text, "+02:00:00");

  // An attempt booked at 25h shows its own time and counts for the second day.
  RecordTime metered = timeline.Next({{"kind", "attempt-metered"}, {"time", "x"}, {"bookedAtMillis", 25 * 3600000}});
  EXPECT_EQ(metered.text, "+25:00:00");
  EXPECT_EQ(metered.day, "day 2");
  // The carried time never goes back.
  EXPECT_EQ(timeline.Next(Decision(3600000)).text, "+01:00:00");
  EXPECT_EQ(timeline.Next({{"kind", "checkpoint"}, {"time", "x"}}).text, "+25:00:00");
  // Who submitted and who cancelled show when the controller took the request.
  EXPECT_EQ(timeline.Next({{"kind", "workload-submitted"}, {"time", "x"}, {"acceptedAtMillis", 26 * 3600000}}).text,
            "+26:00:00");
  EXPECT_EQ(timeline.Next({{"kind", "workload-cancelled"}, {"time", "x"}, {"cancelledAtMillis", 27 * 3600000}}).text,
            "+27:00:00");
}

TEST(RecordTime, WallClockJournalsShowTheCommitTime) {
  RecordTimeline timeline;
  const int64_t wall = int64_t{1795000000000};  // 2026-11-18, Unix epoch milliseconds
  RecordTime t = timeline.Next(Decision(wall, "2026-11-18T10:00:00.000000Z"));
  EXPECT_FALSE(t.is_virtual);
  EXPECT_EQ(t.text, "2026-11-18T10:00:00.000000Z");
  EXPECT_EQ(t.day, "2026-11-18");
}

TEST(RecordTime, BoundsAreWallTimesOrVirtualDurations) {
  std::optional<TimeBound> date = ParseTimeBound("2026-11-01");
  ASSERT_TRUE(date);
  EXPECT_FALSE(date->is_virtual);
  std::optional<TimeBound> rfc = ParseTimeBound("2026-11-01T10:00:00Z");
  ASSERT_TRUE(rfc);
  EXPECT_EQ(rfc->micros - date->micros, int64_t{10} * 3600 * 1000000);
  std::optional<TimeBound> six_hours = ParseTimeBound("6h");
  ASSERT_TRUE(six_hours);
  EXPECT_TRUE(six_hours->is_virtual);
  EXPECT_EQ(six_hours->micros, int64_t{6} * 3600 * 1000000);
  EXPECT_EQ(ParseTimeBound("+1d2h")->micros, int64_t{26} * 3600 * 1000000);
  EXPECT_FALSE(ParseTimeBound("yesterday"));
  EXPECT_FALSE(ParseTimeBound("-6h"));
}

}  // namespace
}  // namespace gpufed::audit
