#pragma once
// Time as the controller and connectors see it. All core code reads time through a
// Clock so tests and the simulator run in virtual time; nothing reads the system clock
// directly except SystemClock.
#include <chrono>

#include "controller/common/duration.h"
#include "controller/common/mutex.h"

namespace gpufed {

class Clock {
 public:
  virtual ~Clock() = default;
  // Time since the clock's epoch (the start of the run for virtual clocks).
  virtual Duration Now() const = 0;
};

// Wall time as Unix epoch milliseconds, so times stored by one process mean the same in
// the next (queue waits, attempt durations and metering survive a restart). Read once
// from the system clock at construction and advanced by the monotonic clock after, so a
// step of the system clock during a run never moves time backwards.
class SystemClock : public Clock {
 public:
  SystemClock()
      : epoch_at_start_(
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
                .count()),
        start_(std::chrono::steady_clock::now()) {}
  Duration Now() const override {
    auto d = std::chrono::steady_clock::now() - start_;
    return Duration::FromMillis(epoch_at_start_ + std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  }

 private:
  int64_t epoch_at_start_;
  std::chrono::steady_clock::time_point start_;
};

// Virtual time that moves only when told to. Thread-safe: the HTTP server reads it
// while the run loop advances it.
class ManualClock : public Clock {
 public:
  explicit ManualClock(Duration start = {}) : now_(start) {}
  Duration Now() const override {
    MutexLock lock(mu_);
    return now_;
  }
  // Moves forward to `t`; never backwards (a later time is kept).
  void AdvanceTo(Duration t) {
    MutexLock lock(mu_);
    if (t > now_) now_ = t;
  }
  void Advance(Duration d) {
    MutexLock lock(mu_);
    now_ = now_ + d;
  }

 private:
  mutable Mutex mu_;
  Duration now_ GUARDED_BY(mu_);
};

}  // namespace gpufed
