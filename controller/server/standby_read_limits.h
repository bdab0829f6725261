#pragma once
// A standby's rate limit on each tenant's reads (issue 38). The leader holds each tenant
// to the API rate its Tenant declares (admission.h), a policy revision a standby does not
// load; a standby holds every tenant to a Tenant's default rate instead
// (model::Tenant::kDefaultApiRatePerSecond and kDefaultApiBurst), so one tenant's reads
// cannot keep the standby's one read session from the others. Admins and scrapers are not
// limited, as on the leader. Thread-safe.
#include <string>
#include <unordered_map>

#include "controller/common/clock.h"
#include "controller/common/duration.h"
#include "controller/common/mutex.h"
#include "controller/common/token_bucket.h"

namespace gpufed::server {

class StandbyReadLimits {
 public:
  // `clock` null: the wall clock. Must outlive this.
  StandbyReadLimits(double per_second, int burst, const gpufed::Clock* clock);
  // Whether `tenant` may read now (one read taken); false when it is over its rate.
  bool Take(const std::string& tenant) EXCLUDES(mu_);
  // Seconds until a refused tenant may read again (Retry-After), at least 1.
  int64_t retry_after_seconds() const;
  double per_second() const { return per_second_; }

 private:
  const double per_second_;
  const int burst_;
  const gpufed::Clock* clock_;
  gpufed::SystemClock wall_;
  Mutex mu_;
  // One bucket per tenant a token names: as many as the token table's tenants.
  std::unordered_map<std::string, TokenBucket> buckets_ GUARDED_BY(mu_);
};

}  // namespace gpufed::server
