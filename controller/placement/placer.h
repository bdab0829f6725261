#pragma once
// The placer's internals: one Placer per MakePlan call. Split from plan.h so tests of
// the public contract do not depend on it. Implemented across placer.cc (order, admit,
// filter, score, bind), placer_checks.cc (policy filters, burst gate, budgets) and
// preemption.cc (victim selection).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/placement/cost.h"
#include "controller/placement/inventory.h"
#include "controller/placement/plan.h"

namespace gpufed::placement {

// What a request counts against quotas and fair share: whole GPUs, or the share asked.
int64_t RequestedGpuMilli(const model::ResourceRequest& r);

class Placer {
 public:
  explicit Placer(const Snapshot& snapshot);
  Plan Run();

 private:
  struct ClusterEntry {
    const model::Cluster* cluster;
    nlohmann::json view;
    std::vector<nlohmann::json> pool_views;
    ClusterState state;
  };
  struct ActiveRule {
    const model::Policy* policy;
    const model::Rule* rule;
  };
  // A way to run the workload on one cluster right now.
  struct Candidate {
    size_t cluster;
    std::vector<std::pair<int, NodeFit>> nodes;  // one per gang member; empty = no fit
    bool provision = false;
    CostEstimate cost;
    const model::NodePool* pool = nullptr;
  };
  // Per-tenant state for ordering, quotas and budgets during the plan.
  struct TenantState {
    const model::Tenant* tenant = nullptr;  // null for a tenant the config does not declare
    TenantUsage usage;                      // in-use includes running work and this plan's placements
  };
  // A running workload's reservation, kept so preemption can release it.
  struct RunningEntry {
    const RunningWorkload* running;
    size_t cluster;
    std::vector<std::pair<int, NodeFit>> nodes;
    int64_t gpu_milli = 0;
    bool active = true;  // false once preempted in this plan
  };

  void ReserveRunning();
  Decision Decide(const model::Workload& w);
  // Every filter for cluster c (policies, residency, hooks, hardware shape, maxCost);
  // on success sets verdict.cost to the cheapest allowed pool and `pool_allowed`.
  bool FilterCluster(const model::Workload& w, const nlohmann::json& wv, const std::vector<bool>& applies, size_t c,
                     ClusterVerdict& verdict, std::vector<bool>& pool_allowed);
  // Fills the score of every cluster with a candidate (cost, locality, packing, on-prem, Lua).
  void ScoreCandidates(const model::Workload& w, const nlohmann::json& wv,
                       const std::vector<std::optional<Candidate>>& candidates, Decision& d);
  // Policy rules, residency and Lua filter for one cluster; fills pool_allowed.
  // `pool_denials[p]` receives the rule (and reason) that excluded node pool p, so a
  // later hardware mismatch can name the rule that really ruled the cluster out.
  bool PassesPolicies(const model::Workload& w, const nlohmann::json& wv, const std::vector<bool>& applies, size_t c,
                      ClusterVerdict& verdict, std::vector<bool>& pool_allowed,
                      std::vector<std::pair<std::string, std::string>>& pool_denials);
  std::optional<Candidate> FindCandidate(const model::Workload& w, size_t c, const std::vector<bool>& pool_allowed);
  void Bind(const model::Workload& w, const Candidate& candidate, Decision& d);
  // Why bursting to the cloud is not yet allowed ("" when it is).
  std::string BurstBlock(const model::Workload& w) const;
  // Budget check of a projected cost on one cluster; "" when within budget, else why.
  // `never` is set when the cost exceeds the whole limit, so waiting cannot help.
  std::string OverBudget(const model::Cluster& cluster, const TenantState& t, const Money& cost, bool& never) const;
  void RaiseAlerts(const TenantState& before, const TenantState& after, Decision& d) const;
  // The tenant whose queue head goes next: highest priority, then under its guarantee,
  // then lowest dominant share per weight, then name.
  bool ServedBefore(const std::string& a, const model::Workload& wa, const std::string& b,
                    const model::Workload& wb);
  double ShareOf(const std::string& tenant);
  TenantState& Tenant(const std::string& name);

  // Preemption (preemption.cc): frees the minimal set of lower-priority, preemptible
  // running work on on-prem cluster `c` that makes `w` fit, and returns the candidate.
  std::optional<Candidate> PreemptFor(const model::Workload& w, size_t c, const std::vector<bool>& pool_allowed,
                                      Decision& d);
  bool VictimAllowed(const model::Workload& w, const RunningEntry& r, std::map<std::string, int64_t>& freed) const;
  void ReleaseEntry(ClusterState& state, const RunningEntry& r) const;

  const Snapshot& snapshot_;
  const model::Config& config_;
  std::vector<ClusterEntry> clusters_;   // sorted by name
  std::vector<ActiveRule> rules_;
  model::ScoringWeights weights_;
  model::BurstThresholds burst_;
  std::map<std::string, TenantState> tenants_;
  std::vector<RunningEntry> running_;
  int onprem_queue_depth_ = 0;
  double fleet_gpus_ = 0;     // GPUs present in every cluster, for dominant shares
  double window_hours_ = 0;   // DecayedWindowHours(half-life)
  bool needs_views_ = false;  // rules or hooks read the workload's JSON view
};

}  // namespace gpufed::placement
