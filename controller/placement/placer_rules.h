#pragma once
// Names of the placer's built-in checks and small helpers shared by its source files.
// Built-in checks are named like rules so explanations and PolicyTests can refer to them.
#include <cstdint>
#include <string>

#include "controller/model/workload.h"
#include "controller/placement/inventory.h"

namespace gpufed::placement {

inline constexpr const char* kRuleResidency = "data-residency";
inline constexpr const char* kRuleHardware = "hardware";
inline constexpr const char* kRuleSpot = "spot";
inline constexpr const char* kRuleMaxCost = "max-cost";
inline constexpr const char* kRuleBudget = "tenant-budget";
inline constexpr const char* kRuleCapacity = "capacity";
inline constexpr const char* kRuleUnhealthy = "unhealthy";  // capacity held back by an outage
inline constexpr const char* kRuleBurst = "burst";
inline constexpr const char* kRuleTenantQuota = "tenant-quota";
inline constexpr const char* kRulePolicyError = "policy-error";
inline constexpr const char* kRulePreemption = "preemption";

// "2" for whole GPUs, "0.25" for shares.
std::string FormatGpus(int64_t milli);

// Why a workload with `spot: false` may not use `pool` (spot capacity).
inline std::string SpotNotAllowed(const model::NodePool& pool) {
  return "spot not allowed: pool " + pool.name + " is spot capacity and the workload has spot: false";
}

// GPU share a request takes on a pool with demand `d` (all gang members).
inline int64_t GpuMilli(const model::ResourceRequest& r, const GpuDemand& d) {
  const int per_node = d.milli_each * d.gpus;
  return int64_t{per_node} * std::max(1, r.nodes);
}

}  // namespace gpufed::placement
