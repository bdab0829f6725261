#pragma once
// The placer's internals: one Placer per MakePlan call. Split from plan.h so tests of
// the public contract do not depend on it.
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/placement/cost.h"
#include "controller/placement/inventory.h"
#include "controller/placement/plan.h"

namespace gpufed::placement {

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

  Decision Decide(const model::Workload& w);
  // Policy rules, residency and Lua filter for one cluster; fills pool_allowed.
  // `pool_denials[p]` receives the rule (and reason) that excluded node pool p, so a
  // later hardware mismatch can name the rule that really ruled the cluster out.
  bool PassesPolicies(const model::Workload& w, const nlohmann::json& wv, const std::vector<bool>& applies, size_t c,
                      ClusterVerdict& verdict, std::vector<bool>& pool_allowed,
                      std::vector<std::pair<std::string, std::string>>& pool_denials);
  std::optional<Candidate> FindCandidate(const model::Workload& w, size_t c, const std::vector<bool>& pool_allowed);
  void Bind(const model::Workload& w, const Candidate& candidate, Decision& d);
  std::string BurstBlock(const model::Workload& w) const;
  std::vector<const model::Workload*> FairOrder() const;

  const Snapshot& snapshot_;
  const model::Config& config_;
  std::vector<ClusterEntry> clusters_;   // sorted by name
  std::vector<ActiveRule> rules_;
  model::ScoringWeights weights_;
  model::BurstThresholds burst_;
  std::map<std::string, TenantUsage> usage_;
  std::map<std::string, int64_t> plan_gpu_milli_;  // placed in this plan, by tenant
  int onprem_queue_depth_ = 0;
};

}  // namespace gpufed::placement
