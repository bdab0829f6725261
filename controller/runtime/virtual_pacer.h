#pragma once
// Paces a simulated run's virtual clock against the wall: `--speed S` means S virtual
// seconds per wall second. The run loop asks where virtual time may go next; the answer
// is the next event when the wall clock has caught up with it, else the time the wall
// clock allows (so a long gap between events is crossed in steps, and an API call such as
// a cancel lands at the virtual time it was made, not at the next event hours later).
//
// The pace is measured from an anchor (the construction), not step by step, so the time a
// pass takes is part of the pace instead of adding to it: a run that falls behind (slow
// passes) catches up by not waiting, never by skipping events.
#include <chrono>
#include <functional>

#include "controller/common/duration.h"

namespace gpufed::runtime {

class VirtualPacer {
 public:
  using WallClock = std::function<std::chrono::steady_clock::time_point()>;
  // Longest single wait, so the loop serves stop signals and API calls in between.
  static constexpr std::chrono::milliseconds kMaxWait{250};

  // speed: virtual seconds per wall second, in [1e-9, 1e9] (clamped); the pace starts
  // now, at `virtual_start`. `wall` defaults to steady_clock.
  VirtualPacer(double speed, Duration virtual_start, WallClock wall = nullptr);

  struct Step {
    Duration advance_to;              // never before `now`, never past `next`
    std::chrono::milliseconds wait{};  // wall time to wait first; zero when `next` is due
  };
  // Where the virtual clock, at `now`, may advance on the way to the event at `next`.
  // Call again after waiting: the answer moves on with the wall clock.
  Step Toward(Duration now, Duration next);

 private:
  double speed_;
  WallClock wall_;
  Duration virtual_anchor_;
  std::chrono::steady_clock::time_point wall_anchor_;
};

}  // namespace gpufed::runtime
