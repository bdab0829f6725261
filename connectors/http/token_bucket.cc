#include "connectors/http/token_bucket.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <ctime>

namespace gpufed::connectors::http {

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

std::optional<int64_t> ParseHttpDate(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return static_cast<int64_t>(timegm(&tm));
}

std::optional<Duration> ParseRetryAfter(const std::string& value, const std::string& date_header) {
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](unsigned char c) { return std::isdigit(c); })) {
    if (value.size() > 9) return std::nullopt;  // over 30 years: not a real hint
    return Duration::FromSeconds(std::stoll(value));
  }
  std::optional<int64_t> at = ParseHttpDate(value);
  std::optional<int64_t> now = ParseHttpDate(date_header);
  if (!at || !now) return std::nullopt;
  return Duration::FromSeconds(std::max<int64_t>(0, *at - *now));
}

}  // namespace gpufed::connectors::http
