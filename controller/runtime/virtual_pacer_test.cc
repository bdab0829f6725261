// --speed on a wall clock the test owns: virtual time keeps the asked pace, events are
// never skipped, and a slow loop catches up instead of drifting.
#include "controller/runtime/virtual_pacer.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace gpufed::runtime {
namespace {

class FakeWall {
 public:
  VirtualPacer::WallClock clock() {
    return [this] { return now_; };
  }
  void Advance(std::chrono::milliseconds d) { now_ += d; }
  double Seconds() const { return std::chrono::duration<double>(now_ - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_{};
  std::chrono::steady_clock::time_point now_{};
};

// The run loop's use: ask, wait what it says, advance; `pass` is the wall time each
// iteration's pass takes. Returns the virtual times the loop stopped at.
std::vector<Duration> RunTo(VirtualPacer& pacer, FakeWall& wall, Duration& now, Duration event,
                            std::chrono::milliseconds pass = std::chrono::milliseconds(0)) {
  std::vector<Duration> stops;
  for (int i = 0; i < 10'000'000 && now < event; ++i) {
    wall.Advance(pass);
    VirtualPacer::Step step = pacer.Toward(now, event);
    EXPECT_GE(step.advance_to, now);
    EXPECT_LE(step.advance_to, event);
    EXPECT_LE(step.wait, VirtualPacer::kMaxWait);
    wall.Advance(step.wait);
    now = step.advance_to;
    stops.push_back(now);
  }
  return stops;
}

struct Pace {
  double speed;
  Duration event;
  double wall_seconds;  // what the pace means
};

class PacedRun : public ::testing::TestWithParam<Pace> {};

TEST_P(PacedRun, VirtualTimeKeepsTheAskedPaceWithinTenPercent) {
  const Pace p = GetParam();
  FakeWall wall;
  VirtualPacer pacer(p.speed, Duration(), wall.clock());
  Duration now;
  RunTo(pacer, wall, now, p.event);
  EXPECT_EQ(now, p.event);
  EXPECT_NEAR(wall.Seconds(), p.wall_seconds, p.wall_seconds * 0.10) << "speed " << p.speed;
}

INSTANTIATE_TEST_SUITE_P(Speeds, PacedRun,
                         ::testing::Values(Pace{1, Duration::FromSeconds(3600), 3600},
                                           Pace{60, Duration::FromSeconds(3600), 60},
                                           Pace{0.01, Duration::FromSeconds(2), 200},
                                           Pace{7200, Duration::FromSeconds(86400), 12}));

// A cancel made through the API between two events far apart is seen within a quarter of
// a wall second of virtual time at the pace, not at the next event.
TEST(VirtualPacer, CrossesALongGapInSmallSteps) {
  FakeWall wall;
  VirtualPacer pacer(1, Duration(), wall.clock());
  Duration now;
  std::vector<Duration> stops = RunTo(pacer, wall, now, Duration::FromSeconds(int64_t{3} * 3600));
  ASSERT_GT(stops.size(), 1u);
  Duration before;
  for (Duration stop : stops) {
    EXPECT_LE(stop.millis() - before.millis(), 251) << "a jump of more than the longest wait at speed 1";
    before = stop;
  }
}

TEST(VirtualPacer, ASlowLoopCatchesUpWithoutSkippingEvents) {
  FakeWall wall;
  VirtualPacer pacer(10, Duration(), wall.clock());
  Duration now;
  // Events every virtual second, passes of two wall seconds (20 virtual seconds' worth).
  for (int second = 1; second <= 50; ++second) {
    const Duration event = Duration::FromSeconds(second);
    RunTo(pacer, wall, now, event, std::chrono::milliseconds(2000));
    EXPECT_EQ(now, event);
  }
  // Behind the pace, the loop never waited: 50 passes of 2 s.
  EXPECT_NEAR(wall.Seconds(), 100, 1);
}

TEST(VirtualPacer, AnEventAlreadyDueIsReachedAtOnce) {
  FakeWall wall;
  VirtualPacer pacer(1, Duration(), wall.clock());
  VirtualPacer::Step step = pacer.Toward(Duration::FromSeconds(5), Duration::FromSeconds(5));
  EXPECT_EQ(step.advance_to, Duration::FromSeconds(5));
  EXPECT_EQ(step.wait.count(), 0);
  step = pacer.Toward(Duration::FromSeconds(5), Duration::FromSeconds(4));  // in the past: stays
  EXPECT_EQ(step.advance_to, Duration::FromSeconds(5));
}

TEST(VirtualPacer, AHugeSpeedOrAFarEventDoesNotOverflow) {
  FakeWall wall;
  const Duration far = Duration::FromMillis(std::numeric_limits<int64_t>::max());
  VirtualPacer fastest(std::numeric_limits<double>::max(), Duration(), wall.clock());  // taken as 1e9
  wall.Advance(std::chrono::milliseconds(1));
  VirtualPacer::Step step = fastest.Toward(Duration(), far);
  EXPECT_EQ(step.advance_to, Duration::FromSeconds(1'000'000));
  EXPECT_EQ(step.wait, VirtualPacer::kMaxWait);
  wall.Advance(std::chrono::hours(24 * 365 * 100));  // a century later: the event is due
  EXPECT_EQ(fastest.Toward(Duration(), far).advance_to, far);
  VirtualPacer slowest(0, Duration(), wall.clock());  // taken as 1e-9
  wall.Advance(std::chrono::hours(1));
  step = slowest.Toward(Duration(), far);
  EXPECT_EQ(step.advance_to, Duration());
  EXPECT_EQ(step.wait, VirtualPacer::kMaxWait);
  VirtualPacer nan(std::numeric_limits<double>::quiet_NaN(), Duration(), wall.clock());
  EXPECT_LE(nan.Toward(Duration(), far).wait, VirtualPacer::kMaxWait);
}

}  // namespace
}  // namespace gpufed::runtime
