#include "controller/server/standby_read_limits.h"

#include <algorithm>
#include <cmath>

namespace gpufed::server {

StandbyReadLimits::StandbyReadLimits(double per_second, int burst, const gpufed::Clock* clock)
    : per_second_(per_second), burst_(burst), clock_(clock != nullptr ? clock : &wall_) {}

bool StandbyReadLimits::Take(const std::string& tenant) {
  const Duration now = clock_->Now();
  MutexLock lock(mu_);
  auto it = buckets_.try_emplace(tenant, per_second_, burst_).first;
  return it->second.Reserve(now, Duration()).has_value();
}

int64_t StandbyReadLimits::retry_after_seconds() const {
  if (per_second_ <= 0) return 1;
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(1.0 / per_second_)));
}

}  // namespace gpufed::server
