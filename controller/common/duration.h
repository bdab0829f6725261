#pragma once
// Durations written as Go/Kubernetes text: "90s", "6h", "1h30m", "500ms", "2d".
// Held as whole milliseconds; negative durations are rejected.
#include <cstdint>
#include <string>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed {

class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration FromMillis(int64_t ms) { return Duration(ms); }
  static constexpr Duration FromSeconds(int64_t s) { return Duration(s * 1000); }

  static Result<Duration> Parse(std::string_view text);

  constexpr int64_t millis() const { return millis_; }
  double seconds() const { return static_cast<double>(millis_) / 1000.0; }
  // Shortest exact text: "6h", "1h30m", "90s" (as "1m30s"), "500ms", "0s".
  std::string ToString() const;

  friend constexpr auto operator<=>(Duration, Duration) = default;
  friend constexpr Duration operator+(Duration a, Duration b) { return Duration(a.millis_ + b.millis_); }

 private:
  constexpr explicit Duration(int64_t ms) : millis_(ms) {}
  int64_t millis_ = 0;
};

}  // namespace gpufed
