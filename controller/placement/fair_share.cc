#include "controller/placement/fair_share.h"

#include <algorithm>
#include <cmath>

namespace gpufed::placement {

double DecayedWindowHours(Duration half_life) {
  return half_life.seconds() / std::log(2.0) / 3600.0;
}

double DominantShare(double gpus_in_use, double decayed_gpu_hours, double weight, double fleet_gpus,
                     double window_hours) {
  const double fleet = fleet_gpus > 0 ? fleet_gpus : 1;
  const double now_share = gpus_in_use / fleet;
  const double past_share = window_hours > 0 ? decayed_gpu_hours / (fleet * window_hours) : 0;
  return std::max(now_share, past_share) / (weight > 0 ? weight : 1);
}

FairShareLedger::FairShareLedger(Duration half_life)
    : half_life_(half_life.millis() > 0 ? half_life : kDefaultFairShareHalfLife) {}

void FairShareLedger::Advance(Duration now) {
  if (now <= last_) return;
  const double dt_h = (now.millis() - last_.millis()) / 3.6e6;
  const double h = half_life_.millis() / 3.6e6;
  const double decay = std::exp2(-dt_h / h);
  // Usage held at a constant rate r over the step contributes
  // r * integral_0^dt 2^(-(dt - t)/h) dt = r * h / ln2 * (1 - 2^(-dt/h)).
  const double accrual = h / std::log(2.0) * (1 - decay);
  for (auto& [tenant, e] : tenants_) {
    e.decayed_hours = e.decayed_hours * decay + e.held_milli / 1000.0 * accrual;
  }
  last_ = now;
}

void FairShareLedger::Hold(const std::string& tenant, int64_t gpu_milli) { tenants_[tenant].held_milli = gpu_milli; }

int64_t FairShareLedger::Held(const std::string& tenant) const {
  auto it = tenants_.find(tenant);
  return it == tenants_.end() ? 0 : it->second.held_milli;
}

double FairShareLedger::DecayedGpuHours(const std::string& tenant) const {
  auto it = tenants_.find(tenant);
  return it == tenants_.end() ? 0 : it->second.decayed_hours;
}

FairShareState FairShareLedger::State() const {
  FairShareState state;
  state.last = last_;
  for (const auto& [tenant, e] : tenants_) state.decayed_hours[tenant] = e.decayed_hours;
  return state;
}

void FairShareLedger::Restore(const FairShareState& state) {
  last_ = state.last;
  for (auto& [tenant, e] : tenants_) e.decayed_hours = 0;
  for (const auto& [tenant, hours] : state.decayed_hours) tenants_[tenant].decayed_hours = hours;
}

}  // namespace gpufed::placement
