#include "controller/common/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace gpufed {

TokenBucket::TokenBucket(double qps, int burst) : qps_(qps), burst_(std::max(1, burst)), tokens_(burst_) {}

std::optional<Duration> TokenBucket::Reserve(Duration now, Duration max_wait) {
  if (qps_ <= 0) return Duration();
  if (!started_) {
    started_ = true;
    last_ = now;
  }
  if (now > last_) {
    double elapsed = static_cast<double>(now.millis() - last_.millis()) / 1000.0;
    tokens_ = std::min<double>(burst_, tokens_ + elapsed * qps_);
    last_ = now;
  }
  // Tokens may go negative: a reservation borrows from the future, and the next caller
  // waits correspondingly longer (as golang.org/x/time/rate does).
  double after = tokens_ - 1;
  int64_t wait_ms = after >= 0 ? 0 : static_cast<int64_t>(std::ceil(-after / qps_ * 1000.0));
  if (wait_ms > max_wait.millis()) return std::nullopt;
  tokens_ = after;
  return Duration::FromMillis(wait_ms);
}

}  // namespace gpufed
