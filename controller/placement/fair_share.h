#pragma once
// Fair-share accounting: GPU-hours per tenant over an exponentially decaying window,
// and the dominant share the placer orders tenants by.
//
// The placer itself is pure; the caller (reconcile loop, trace replay) keeps one
// FairShareLedger, advances it whenever the GPUs a tenant holds change, and copies
// DecayedGpuHours() into TenantUsage::decayed_gpu_hours for each plan.
#include <cstdint>
#include <map>
#include <string>

#include "controller/common/duration.h"

namespace gpufed::placement {

inline constexpr Duration kDefaultFairShareHalfLife = Duration::FromSeconds(24 * 3600);

// The GPU-hours one GPU supplies over the whole decayed window: the integral of
// 2^(-age / half_life) over all ages, i.e. half_life / ln 2, in hours.
double DecayedWindowHours(Duration half_life);

// A tenant's dominant share of the fleet: the larger of its share of the GPUs now and
// its share of the GPU-hours the fleet could have supplied over the decayed window,
// divided by its weight. Lower is served first. `fleet_gpus` <= 0 counts as 1.
double DominantShare(double gpus_in_use, double decayed_gpu_hours, double weight, double fleet_gpus,
                     double window_hours);

// What a ledger knows, so a restarted controller continues it instead of forgetting
// every tenant's past use.
struct FairShareState {
  Duration last;                                   // the last Advance
  std::map<std::string, double> decayed_hours;     // per tenant, as of `last`
};

// Decayed GPU-hours per tenant. Usage between two Advance calls is taken as constant
// (what the tenant held at the earlier call), which is exact for event-driven callers
// that advance before every change.
class FairShareLedger {
 public:
  explicit FairShareLedger(Duration half_life = kDefaultFairShareHalfLife);

  // Accrues what each tenant held since the last call (set by the previous Hold calls),
  // decaying older usage, up to `now`. `now` earlier than the last call is ignored.
  void Advance(Duration now);
  // From now on `tenant` holds `gpu_milli` (1000 per GPU) until changed.
  void Hold(const std::string& tenant, int64_t gpu_milli);
  int64_t Held(const std::string& tenant) const;
  // GPU-hours used, weighted by age, as of the last Advance.
  double DecayedGpuHours(const std::string& tenant) const;
  Duration half_life() const { return half_life_; }
  // The decayed usage and the time it is as of (holdings are not part of it: the
  // caller sets them again from what runs).
  FairShareState State() const;
  // Replaces the decayed usage with `state`'s. Holdings are kept.
  void Restore(const FairShareState& state);

 private:
  struct Entry {
    double decayed_hours = 0;
    int64_t held_milli = 0;
  };
  Duration half_life_;
  Duration last_;
  std::map<std::string, Entry> tenants_;
};

}  // namespace gpufed::placement
