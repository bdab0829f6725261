#pragma once
// A token bucket on an injected time line (client-go's flowcontrol semantics: `burst`
// tokens, refilled at `qps` per second). Used by the HTTP connectors' clients and the
// API's per-tenant rate limits. Not thread-safe; the owner serialises calls.
#include <optional>

#include "controller/common/duration.h"

namespace gpufed {

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

}  // namespace gpufed
