#pragma once
// The placer's input (Snapshot) and output (Plan). MakePlan is a pure function: no I/O,
// no clock, no globals; the same snapshot gives the same plan, byte for byte.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/model/config.h"
#include "controller/placement/hooks.h"
#include "controller/placement/observed.h"
#include "controller/placement/plan_memo.h"

namespace gpufed::placement {

// What a tenant already uses and spends outside this plan (from the store).
struct TenantUsage {
  int64_t gpu_milli_in_use = 0;  // 1000 per whole GPU
  Money spent;        // this budget period, all clusters, in the budget's currency
  Money cloud_spent;  // this budget period, non-onprem clusters, in the budget's currency
  // GPU-hours used recently, each hour weighted by 2^(-age / half-life) (fair_share.h
  // keeps this ledger). Fair share compares it with what the fleet could have supplied
  // over the same decayed window; 0 everywhere reduces fair share to GPUs in use.
  double decayed_gpu_hours = 0;
};

// Where a workload runs (or will run once placed).
struct Binding {
  std::string cluster;
  std::string pool;                 // the node pool of its nodes (one pool per binding)
  std::vector<std::string> nodes;   // one per gang member (one for single-node work)
  std::vector<std::vector<int>> gpus;  // GPU indices on each of `nodes`
  int gpu_milli_each = 1000;
  std::string mig_profile;
  int mig_start = -1;               // first MIG memory slice on the GPU (-1: none or unknown)
  bool provisions_node = false;     // an elastic node is added for it
  Duration ready_after;             // provisioning delay plus data transfer
  bool operator==(const Binding&) const = default;
};

// A workload that holds capacity now (observed by connectors, or bound by an earlier
// plan). The placer reserves its binding before placing anything, and may preempt it.
struct RunningWorkload {
  const model::Workload* workload = nullptr;  // must outlive the call
  Binding binding;                  // cluster, nodes and GPUs it holds
  Duration started_at;              // same epoch as Snapshot::now
  Duration last_checkpoint;         // when its last checkpoint completed (0: none)
  int attempt = 1;                  // 1 for the first run; +1 per requeue
};

struct Snapshot {
  const model::Config* config = nullptr;          // clusters, tenants, policies; must outlive the call
  std::vector<const model::Workload*> pending;    // what to place; must outlive the call
  Duration now;                                   // virtual time since the plan's epoch
  std::map<std::string, TenantUsage> usage;       // by tenant; absent: the Tenant's declared spend
  int onprem_queue_depth = 0;                     // workloads already waiting for on-prem
  PolicyHooks* hooks = nullptr;                   // Lua hooks; may be null
  // Running work, reserved before any pending workload is considered. Running work is
  // never moved (no ping-pong); on-prem work may be preempted by higher priorities.
  std::vector<RunningWorkload> running;
  // Observed inventory by cluster name. A cluster listed here is planned on the nodes it
  // reported (names, pools, and free capacity as the upper bound); a cluster absent is
  // planned on its declared node pools, nodes named "<pool>-<i>" (gpufed plan, what-ifs).
  std::map<std::string, ObservedCluster> observed;
  // Half-life of the fair-share usage window (see TenantUsage::decayed_gpu_hours); used
  // to express decayed GPU-hours as a share of the fleet. 0: 24h (kDefaultFairShareHalfLife).
  Duration fair_share_half_life;
  // Called after each decision, in order (benchmarks time decisions with it; the placer
  // itself reads no clock). May be empty.
  std::function<void(const struct Decision&)> on_decision;
  // Federations of up to this many clusters get every cluster's verdict in each
  // decision; larger ones get the chosen cluster, the best runners-up and the clusters
  // closest to fitting, and groups (by rule) for the rest (Decision::verdict_groups).
  size_t explain_clusters = kExplainAllClusters;
  static constexpr size_t kExplainAllClusters = 64;
  // The requests the packing policy judges fragmentation against, each with how many
  // workloads asked for it. Empty: the plan's own pending and running work. A controller
  // passes the mix it has seen recently and refreshes it only when it drifts, so that
  // consecutive plans judge packing alike and a memo can keep what they found.
  std::vector<std::pair<model::ResourceRequest, int64_t>> pod_mix;
  // State kept between plans by the caller, so a plan recomputes only what changed
  // (plan_memo.h). Null: none. The plan is the same with or without it.
  PlanMemo* memo = nullptr;
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

// Clusters a large federation's decision does not list one by one, grouped by the
// check that decided about them (rule "" for eligible clusters that scored lower).
struct VerdictGroup {
  std::string rule;
  std::string reason;                 // the first cluster's reason (in name order)
  int clusters = 0;
  std::vector<std::string> examples;  // the first few cluster names, in name order
};

// One running workload stopped to make room for a higher-priority one. The caller
// stops it (checkpointing it first when it can) and requeues it as attempt + 1.
struct Preemption {
  std::string workload;
  std::string tenant;
  int priority = 0;
  std::string cluster;
  std::vector<std::string> nodes;
  int64_t gpu_milli = 0;            // capacity it frees
  bool checkpointable = false;      // resumes from its last checkpoint
  Duration lost_work;               // run time since its last checkpoint (or start)
  std::string reason;
};

// A tenant's projected spend crossed one of its alertAt levels with this decision.
struct BudgetAlert {
  std::string tenant;
  bool cloud = false;               // the cloud-only limit rather than the total limit
  double level = 0;                 // the alertAt fraction crossed, e.g. 0.8
  Money spent;                      // projected spend after the decision
  Money limit;
  std::string message;
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
  std::vector<ClusterVerdict> verdicts;  // per cluster, in cluster name order (see Snapshot::explain_clusters)
  std::vector<VerdictGroup> verdict_groups;  // the clusters `verdicts` leaves out (large federations)
  std::vector<Preemption> preempted;     // running work this placement displaces
  std::vector<BudgetAlert> alerts;       // budget alert levels this placement crosses
  // The exchange rates its money checks used (a cluster's prices against the tenant's
  // budget or the workload's maxCost in another currency), once per pair.
  std::vector<model::AppliedRate> exchange_rates;
};

struct Plan {
  std::string revision;
  std::vector<Decision> decisions;  // in the order they were made
  std::vector<BudgetAlert> alerts;  // every decision's alerts, in decision order
};

Plan MakePlan(const Snapshot& snapshot);

// A binding as the store, the API and audit snapshots keep it:
// {"cluster", "pool"?, "nodes":[{"node","gpus":[...]}], "gpu_milli_each", "mig_profile"?,
//  "mig_start"?, "provisions_node"?, "ready_after_ms"?}.
nlohmann::json BindingToJson(const Binding& binding);
// The inverse; fields that are absent or of the wrong type take their defaults.
Binding BindingFromJson(const nlohmann::json& json);

// {"cost", "locality", "fragmentation", "onprem", "lua", "total"}.
nlohmann::json ScoreToJson(const ScoreBreakdown& score);

// One cluster's verdict as JSON, as `gpufed plan --output json` and audit records show it:
// {"cluster", "eligible", "fitsNow", "rule"?, "reason"?, "cost" (when eligible),
//  "score" {...} (when it fits now), "warnings"?}.
nlohmann::json ClusterVerdictToJson(const ClusterVerdict& verdict);

// Decision::verdict_groups as JSON (plan output, decision log and audit records):
// [{"rule", "reason", "clusters", "examples"}], rule omitted when empty.
nlohmann::json VerdictGroupsToJson(const std::vector<VerdictGroup>& groups);

}  // namespace gpufed::placement
