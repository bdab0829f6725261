#pragma once
// Time as the controller and connectors see it. All core code reads time through a
// Clock so tests and the simulator run in virtual time; nothing reads the system clock
// directly except SystemClock.
#include <chrono>
#include <mutex>

#include "controller/common/duration.h"

namespace gpufed::connectors {

class Clock {
 public:
  virtual ~Clock() = default;
  // Time since the clock's epoch (the start of the run for virtual clocks).
  virtual Duration Now() const = 0;
};

// Monotonic wall time since construction.
class SystemClock : public Clock {
 public:
  SystemClock() : start_(std::chrono::steady_clock::now()) {}
  Duration Now() const override {
    auto d = std::chrono::steady_clock::now() - start_;
    return Duration::FromMillis(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Virtual time that moves only when told to. Thread-safe: the HTTP server reads it
// while the run loop advances it.
class ManualClock : public Clock {
 public:
  explicit ManualClock(Duration start = {}) : now_(start) {}
  Duration Now() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return now_;
  }
  // Moves forward to `t`; never backwards (a later time is kept).
  void AdvanceTo(Duration t) {
    std::lock_guard<std::mutex> lock(mu_);
    if (t > now_) now_ = t;
  }
  void Advance(Duration d) {
    std::lock_guard<std::mutex> lock(mu_);
    now_ = now_ + d;
  }

 private:
  mutable std::mutex mu_;
  Duration now_;
};

}  // namespace gpufed::connectors
