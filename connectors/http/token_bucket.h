#pragma once
// Shared helper: a token bucket on an injected time line (client-go's flowcontrol
// semantics: `burst` tokens, refilled at `qps` per second). Not thread-safe; the owner
// serialises calls.
#include <optional>

#include "controller/common/duration.h"

namespace gpufed::connectors::http {

class TokenBucket {
 public:
  // qps <= 0 disables limiting; burst < 1 counts as 1.
  TokenBucket(double qps, int burst);

  // Takes one token at `now` if one is available within `max_wait`. Returns how long
  // the caller must wait before using it (zero when available now), or nullopt when
  // the wait would exceed `max_wait` (nothing is taken then).
  std::optional<Duration> Reserve(Duration now, Duration max_wait);

  double qps() const { return qps_; }
  int burst() const { return burst_; }

 private:
  double qps_;
  int burst_;
  double tokens_;
  Duration last_;
  bool started_ = false;
};

// Parses a Retry-After value: delta-seconds ("120"), or an HTTP-date ("Wed, 21 Oct 2015
// 07:28:00 GMT") taken relative to the response's Date header (so clock skew between
// us and the server does not matter). nullopt when unparseable or without a Date.
std::optional<Duration> ParseRetryAfter(const std::string& value, const std::string& date_header);

// Seconds since the Unix epoch for an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT");
// nullopt when malformed.
std::optional<int64_t> ParseHttpDate(const std::string& text);

}  // namespace gpufed::connectors::http
