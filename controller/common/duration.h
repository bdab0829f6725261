#pragma once
// Durations written as Go/Kubernetes text: "90s", "6h", "1h30m", "500ms", "2d".
// Held as whole milliseconds.
//
// Grammar: one or more <digits><unit> (ms, s, m, h, d), or a bare "0"; at most
// kMaxTextLength characters. No sign, fraction or exponent: "-5s", "1.5h" and "1e3s" are
// errors (write 1h30m). The total, and every term of it, is at most kMaxMillis (a
// century); anything larger is an error, never a wrapped value.
#include <cstdint>
#include <string>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed {

class Duration {
 public:
  static constexpr size_t kMaxTextLength = 64;
  static constexpr int64_t kMaxMillis = int64_t{100} * 365 * 86400000;  // a century is absurd enough

  constexpr Duration() = default;
  static constexpr Duration FromMillis(int64_t ms) { return Duration(ms); }
  // Saturates at +-INT64_MAX milliseconds.
  static constexpr Duration FromSeconds(int64_t s) {
    int64_t ms = 0;
    if (__builtin_mul_overflow(s, int64_t{1000}, &ms)) return Duration(s < 0 ? -INT64_MAX : INT64_MAX);
    return Duration(ms);
  }

  static Result<Duration> Parse(std::string_view text);

  constexpr int64_t millis() const { return millis_; }
  double seconds() const { return static_cast<double>(millis_) / 1000.0; }
  // Shortest exact text: "6h", "1h30m", "90s" (as "1m30s"), "500ms", "0s". Parse reads
  // it back to the same value for every duration Parse returns.
  std::string ToString() const;

  friend constexpr auto operator<=>(Duration, Duration) = default;
  // Saturates at +-INT64_MAX milliseconds instead of overflowing.
  friend constexpr Duration operator+(Duration a, Duration b) {
    int64_t sum = 0;
    if (__builtin_add_overflow(a.millis_, b.millis_, &sum)) return Duration(a.millis_ < 0 ? -INT64_MAX : INT64_MAX);
    return Duration(sum);
  }

 private:
  constexpr explicit Duration(int64_t ms) : millis_(ms) {}
  int64_t millis_ = 0;
};

}  // namespace gpufed
