#pragma once
// The placer's input (Snapshot) and output (Plan). MakePlan is a pure function: no I/O,
// no clock, no globals; the same snapshot gives the same plan, byte for byte.
#include <map>
#include <string>
#include <vector>

#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/model/config.h"
#include "controller/placement/hooks.h"

namespace gpufed::placement {

// What a tenant already uses and spends outside this plan (from the store).
struct TenantUsage {
  int64_t gpu_milli_in_use = 0;  // 1000 per whole GPU
  Money spent;        // this budget period, all clusters
  Money cloud_spent;  // this budget period, non-onprem clusters
};

struct Snapshot {
  const model::Config* config = nullptr;          // clusters, tenants, policies; must outlive the call
  std::vector<const model::Workload*> pending;    // what to place; must outlive the call
  Duration now;                                   // virtual time since the plan's epoch
  std::map<std::string, TenantUsage> usage;       // by tenant; absent: the Tenant's declared spend
  int onprem_queue_depth = 0;                     // workloads already waiting for on-prem
  PolicyHooks* hooks = nullptr;                   // Lua hooks; may be null
};

enum class Outcome { kPlaced, kQueued, kRejected };
const char* OutcomeName(Outcome outcome);

struct ScoreBreakdown {
  double cost = 0;
  double locality = 0;
  double fragmentation = 0;
  double onprem = 0;
  double lua = 0;
  double total = 0;
};

// One cluster's verdict for one workload: the first check that rejected it, or its score.
struct ClusterVerdict {
  std::string cluster;
  bool eligible = false;      // passed every filter (it may still lack free capacity)
  bool fits_now = false;      // had free capacity at this point of the plan
  std::string rule;           // the policy rule or built-in check that rejected it
  std::string reason;
  ScoreBreakdown score;
  Money cost;
  std::vector<std::string> warnings;  // warn/dryrun rules that matched
};

struct Binding {
  std::string cluster;
  std::vector<std::string> nodes;   // one per gang member (one for single-node work)
  std::vector<std::vector<int>> gpus;  // GPU indices on each of `nodes`
  int gpu_milli_each = 1000;
  std::string mig_profile;
  bool provisions_node = false;     // an elastic node is added for it
  Duration ready_after;             // provisioning delay plus data transfer
};

struct Decision {
  std::string workload;
  std::string tenant;
  int priority = 0;
  Outcome outcome = Outcome::kQueued;
  Binding binding;
  Money cost;
  std::string reason;
  std::vector<std::string> denied_by;  // rules that denied every cluster (rejected)
  std::vector<std::string> warnings;
  std::vector<ClusterVerdict> verdicts;  // one per cluster, in cluster name order
};

struct Plan {
  std::string revision;
  std::vector<Decision> decisions;  // in the order they were made
};

Plan MakePlan(const Snapshot& snapshot);

}  // namespace gpufed::placement
