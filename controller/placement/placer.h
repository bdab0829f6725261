#pragma once
// The placer's internals: one Placer per MakePlan call. Split from plan.h so tests of
// the public contract do not depend on it. Implemented across placer.cc (order, admit,
// filter, score, bind), placer_setup.cc (the clusters' states, kept between plans by a
// PlanMemo), placer_checks.cc (policy filters, burst gate, budgets) and preemption.cc
// (victim selection).
#include <algorithm>
#include <array>
#include <cassert>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/model/views.h"
#include "controller/placement/cost.h"
#include "controller/placement/inventory.h"
#include "controller/placement/node_packer.h"
#include "controller/placement/plan.h"
#include "controller/placement/plan_memo.h"
#include "controller/placement/search.h"

namespace gpufed::placement {

struct PlacerCaches;

// Where a cluster stands in one decision (Placer::Evaluation), and what then holds it back.
enum class EvaluationStage : uint8_t { kMaxCost, kBudget, kEligible };
constexpr int EvaluationHold(EvaluationStage stage, bool evaluated, bool fits, bool burst_blocked) {
  if (stage == EvaluationStage::kMaxCost) return 1;
  if (stage == EvaluationStage::kBudget) return 2;
  if (evaluated && !fits) return 3;
  return burst_blocked ? 4 : 0;
}
inline constexpr int kEvaluationHoldKinds = 5;  // EvaluationHold's values: 0..4
// A candidate's cost in the scoring currency (ClusterEntry::cost_scale): only a ratio of
// two costs is scored, so a double rate is exact enough, and one currency is untouched.
inline int64_t ScaledCost(int64_t micros, double scale) {
  return scale == 1.0 ? micros : static_cast<int64_t>(static_cast<double>(micros) * scale);
}
// EvaluationHold by key: stage | evaluated << 2 | fits << 3 | burst_blocked << 4.
inline constexpr std::array<uint8_t, 32> kEvaluationHolds = [] {
  std::array<uint8_t, 32> table{};
  for (unsigned key = 0; key < table.size(); ++key) {
    const auto stage = static_cast<EvaluationStage>(std::min(key & 3u, 2u));
    table[key] = static_cast<uint8_t>(EvaluationHold(stage, (key & 4u) != 0, (key & 8u) != 0, (key & 16u) != 0));
  }
  return table;
}();

// What a request counts against quotas and fair share: whole GPUs, or the share asked.
int64_t RequestedGpuMilli(const model::ResourceRequest& r);

class Placer {
 public:
  explicit Placer(const Snapshot& snapshot);
  ~Placer();
  Plan Run();

 private:
  friend struct PlacerCaches;
  struct ClusterEntry {
    const model::Cluster* cluster;
    nlohmann::json view;
    std::vector<nlohmann::json> pool_views;
    ClusterState state;
    bool onprem = false;  // cluster->is_onprem(), asked in every decision's inner loops
    // Observed unhealthy: why (ObservedCluster::down_reason, or a plain "cluster
    // unhealthy"); empty when it is up or not observed. Nothing fits there meanwhile, and
    // its verdicts say so rather than "no free capacity".
    std::string down_reason;
    // Its prices in the scoring currency (the first cluster's, by name) per unit of its
    // own: candidates' costs are ranked in one currency. 1 without a rate (validate
    // refuses a repository that mixes currencies without one).
    double cost_scale = 1.0;
    // Kept between plans by a memo (placer_setup.cc): what `state` was built from (the
    // observed inventory and the running work on it, in order), and its generation then.
    // A plan that changes the state leaves the generation moved, so the next plan
    // rebuilds it; a state built from the same inputs and left unchanged is kept.
    uint64_t inputs = 0;
    uint64_t built_generation = ~uint64_t{0};
    std::unordered_map<std::string, int> node_index;  // node name -> index in state.nodes, as built
    // The state's node names, pools and GPU counts, in order (hashed), and how many nodes
    // that was: what a running entry's node fits are resolved against. Nodes are only
    // ever appended, so a different count means a different layout.
    uint64_t layout = 0;
    size_t layout_nodes = ~size_t{0};
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
  // A running workload's reservation, kept so preemption can release it. On a cluster
  // whose state a memo kept, the node fits are worked out only when preemption asks.
  using NodeFits = std::vector<std::pair<int, NodeFit>>;
  struct RunningEntry {
    const RunningWorkload* running;
    size_t cluster;
    uint64_t key = 0;                // its binding and request (placer_setup.cc's AddRunning)
    const NodeFits* nodes = nullptr;  // set by Resolve: PlacerCaches::resolved's, or own_fits_'
    int64_t gpu_milli = 0;
    bool active = true;     // false once preempted in this plan
    bool resolved = false;  // `nodes` worked out
    const NodeFits& fits() const { return *nodes; }
  };

  // What one cluster's policies (rules, residency, Lua filter and score hooks) say about
  // every workload of a policy class.
  struct PolicyVerdict {
    bool passed = false;
    std::string rule, reason;                // why not, when !passed
    std::vector<std::string> warnings;       // warn/dryrun rules and hooks
    std::vector<bool> pool_allowed;          // pools the rules leave
    std::vector<std::pair<std::string, std::string>> pool_denials;  // rule and reason per excluded pool
    double lua_score = 0;                    // score hooks (when passed)
    std::vector<std::string> score_errors;
  };
  // Workloads that look the same to the policies: the same applicable rules and
  // residency, and the same values wherever the Lua hooks looked (placer_classes.cc).
  struct PolicyClass {
    std::vector<PolicyVerdict> clusters;  // by cluster index
    std::vector<double> lua_scores;       // clusters[c].lua_score, packed for the scoring loop
    uint64_t plan = 0;                    // the last plan that used it (PlacerCaches::plans)
    int64_t passed = 0;                   // clusters that passed (scored)
  };
  // A policy class and one resource request shape: which clusters could ever run it, on
  // which pools at what price, and a cache of where it fits now.
  struct ShapeCluster {
    bool eligible = false;                  // policies and hardware shape allow it
    std::string rule, reason;               // the hardware check's verdict, when the policies passed
    std::vector<bool> pools;                // pools allowed and of the right shape
    int cheapest_pool = -1;                 // the pool cost caps and budgets rule a cluster out on
    int dearest_pool = -1;                  // within the caps, every pool is (ApplyCostCaps)
    std::vector<const Money*> prices;       // GPU-hour price per pool (null: unpriced)
    std::vector<int64_t> gpu_milli;         // GPU share taken on each pool
    uint64_t pool_mask = 0;                 // `pools` as bits (kUnsharedPools beyond 63 pools)
    PoolDemands demands;                    // the request's demand on each of `pools`
  };
  static constexpr uint64_t kUnsharedPools = ~uint64_t{0};
  struct CachedFit {
    uint64_t generation = ~uint64_t{0};     // the cluster state's generation it was found at
    uint64_t mix_epoch = 0;                 // the pod mix a fit was judged against (see PlacerCaches)
    uint64_t pool_mask = 0;                 // the pools it was looked for on (ShapeCluster::pool_mask)
    bool fits = false;
    bool provision = false;
    int pool = -1;
    double quality = 0;
    int64_t price_micros = 0;               // GPU-hour price on `pool` (PriceMicros: 0 unpriced)
    int64_t gpu_milli = 0;                  // GPU share taken on `pool`
  };
  // Where a resource request fits, by cluster: a fit depends on the request, the pools
  // it may use and the cluster's state, not on the policy class, so every shape class
  // of one request shares a table (an entry holds for the pools it was found on).
  struct FitTable {
    std::vector<CachedFit> fits;            // by cluster index
  };
  struct ShapeClass {
    const PolicyClass* policy = nullptr;
    std::vector<ShapeCluster> clusters;     // by cluster index
    std::vector<uint32_t> eligible;         // indices of eligible clusters, in name order
    std::vector<uint32_t> onprem, cloud;    // `eligible` split by on-prem and cloud
    std::vector<uint64_t> pool_masks;       // clusters[c].pool_mask, packed for the candidate scan
    FitTable* fits = nullptr;               // PlacerCaches::fit_tables, or own_fits
    std::unique_ptr<FitTable> own_fits;     // an unshared class's
    // Explanation groups of the clusters that are not eligible (built on first use).
    mutable std::vector<VerdictGroup> fixed_groups;
    mutable bool fixed_groups_built = false;
  };
  // One cluster during one decision (only clusters of the shape's eligible list). Kept
  // small: every decision resets it for every eligible cluster.
  struct Evaluation {
    using Stage = EvaluationStage;
    Stage stage = Stage::kEligible;
    bool evaluated = false;      // capacity was looked for
    bool fits = false;           // a candidate (candidates_[candidate])
    bool preempts = false;       // ... made by preempting running work
    bool burst_blocked = false;  // a cloud cluster the burst gate holds back
    int32_t candidate = -1;

    // What holds it back, as an index into placer_explain.cc's kHoldRules: 0 none (a
    // candidate, or not needed), 1 max-cost, 2 tenant-budget, 3 capacity, 4 burst
    // (EvaluationHold, by table: asked in every decision's walks over eligible clusters,
    // and whether a cluster fits varies from one to the next).
    int Hold() const {
      const unsigned key =
          static_cast<unsigned>(stage) | (evaluated ? 4u : 0u) | (fits ? 8u : 0u) | (burst_blocked ? 16u : 0u);
      return kEvaluationHolds[key];
    }
  };
  // A cluster where the current decision's workload fits now. Kept small (a decision
  // may have a thousand): the score's parts are worked out again, the same way, only
  // for the verdicts a decision lists (ScoreOf).
  struct CandidateEval {  // trivial (no initialisers): Decide makes room for a group at a time
    uint32_t cluster;
    bool onprem;
    double quality;  // packing quality of the node it fits on
    int64_t cost;    // micros
    double total;    // ScoreOf(...).total
  };
  // What the current decision scores against (Decide sets it before scoring).
  struct ScoreBasis {
    int64_t min_cost = 0;     // the cheapest candidate's cost (micros)
    bool moves_data = false;  // the workload names a dataset
  };

  // placer_setup.cc: each cluster's state with the running work reserved, built anew or
  // (with a memo) kept from the last plan when built from the same inputs and unchanged.
  void SetUpClusters(const std::shared_ptr<const PodMix>& mix, uint64_t mix_fingerprint);
  // Sets each cluster's down_reason from the snapshot's observed clusters.
  void NoteOutages();
  void ReserveRunning(const std::vector<bool>& rebuilt);
  // Works out the node fits of a running entry (those a kept state already holds). While
  // a state is built, a node an earlier plan provisioned may be added to it.
  void Resolve(RunningEntry& entry, bool may_add_nodes = false);
  // One workload's decision (placer.cc), made in steps: Admit, ApplyCostCaps,
  // FindCandidates, ScoreCandidates, ChooseCandidate, then DecideQueued or DecidePlaced.
  struct Eligibility;
  struct CandidateSearch;
  Decision Decide(const model::Workload& w);
  // Lua admit hooks, then the tenant's quota; false when they decide `d` (rejected, queued).
  bool Admit(const model::Workload& w, const TenantState& tenant_state, Decision& d);
  // Resets the decision's evaluations and candidates, then holds back the clusters of
  // the shape class that the workload's cost cap or its tenant's budget rule out.
  Eligibility ApplyCostCaps(const model::Workload& w, const ShapeClass& shape, const TenantState& tenant_state);
  // Appends a candidate for each cluster of `group` where `w` fits now (candidates_).
  void EvaluateGroup(const model::Workload& w, ShapeClass& shape, const std::vector<uint32_t>& group, bool onprem);
  // On-prem first (preempting there when nothing fits), the cloud when on-prem has room
  // (to compare) or the burst gate lets the workload go there.
  CandidateSearch FindCandidates(const model::Workload& w, ShapeClass& shape, const Eligibility& eligible, Decision& d);
  // Sets score_basis_ and every candidate's total.
  void ScoreCandidates(const model::Workload& w, const PolicyClass& policy);
  // The best on-prem candidate, else the best cloud one the burst gate allows.
  std::optional<size_t> ChooseCandidate(const CandidateSearch& found) const;
  void DecideQueued(const model::Workload& w, const ShapeClass& shape, const Eligibility& eligible,
                    const std::string& block, Decision& d);
  // Binds `w` to the chosen cluster and says why (score, burst, preemptions).
  void DecidePlaced(const model::Workload& w, const ShapeClass& shape, TenantState& tenant_state,
                    CandidateSearch& found, size_t chosen, Decision& d);
  // A change to a cluster's evaluation outside the candidate scan, with its hold recounted.
  template <typename Change>
  void ChangeHold(Evaluation& e, Change change);
  // The shape class of `w` (placer_classes.cc); built on first use, shared afterwards.
  ShapeClass& ShapeClassFor(const model::Workload& w);
  // The workload's JSON view for rules and hooks: kept between plans by a memo (at most
  // kMaxCachedViews, those the last plan read), else built into scratch_view_. Valid
  // until the next call. With `only`, a view seen for the first time is built with just
  // those top-level members (a cached whole view serves as well).
  const nlohmann::json& ViewOf(const model::Workload& w, const model::ViewMembers* only = nullptr);
  // The view members class lookups read (rule conditions, the hooks' recorded reads),
  // or class_view_whole_ when one of them reads the view itself.
  void UpdateClassMembers();
  // Drops the cached views the plan just made did not read.
  void SweepViews();
  // Drops the resolved bindings the plan did not use once there are more than the
  // running work needs (placer_setup.cc).
  void SweepResolved();
  // The index of w's policy class in policy_classes_, or kUncachedClass (uncached_policy_).
  size_t PolicyClassFor(const model::Workload& w);
  static constexpr size_t kUncachedClass = ~size_t{0};
  // Policy and shape classes kept at most (each kind); beyond it the caches start over.
  size_t MaxCachedClasses() const;
  std::unique_ptr<PolicyClass> EvaluatePolicies(const model::Workload& w, const nlohmann::json& wv,
                                                const std::vector<bool>& applies, bool& cacheable);
  ShapeCluster EvaluateShape(const model::Workload& w, const PolicyVerdict& policy, size_t c) const;
  // Whether a cached fit answers for the cluster's state now (its generation), the pools
  // the shape may use there, and the pod mix; else FindFit works it out (Decide's
  // candidate scan asks it of every eligible cluster). Where nothing fits the packing
  // policy played no part; a fit it chose holds for the pod mix it was chosen against.
  static bool FitHolds(const CachedFit& cached, uint64_t generation, uint64_t pools, uint64_t mix_epoch) {
    return cached.generation == generation && cached.pool_mask == pools && pools != kUnsharedPools &&
           (!cached.fits || cached.mix_epoch == mix_epoch);
  }
  const CachedFit& FindFit(const model::Workload& w, ShapeClass& shape, size_t c);
  // What the current decision may use on cluster c: the shape's pools, or those its cost
  // cap and budget leave (capped_).
  const ShapeCluster& AllowedOn(const ShapeClass& shape, size_t c) const {
    if (capped_.empty()) return shape.clusters[c];
    auto it = capped_.find(static_cast<uint32_t>(c));
    return it == capped_.end() ? shape.clusters[c] : it->second;
  }
  // Whether a projected `cost` on `cluster` is within the workload's maxCost and its
  // tenant's budget (both checked where set).
  bool WithinCaps(const model::Workload& w, const model::Cluster& cluster, const TenantState& t,
                  const Money& cost) const;
  // The score of candidate k in the current decision (score_basis_). Decide ranks by
  // its total; the listed verdicts and the binding carry the parts.
  ScoreBreakdown ScoreOf(const model::Workload& w, const PolicyClass& policy, const CandidateEval& k) const {
    return Score(weights_, score_basis_, LocalityOf(w, k), policy.lua_scores[k.cluster], k);
  }
  double LocalityOf(const model::Workload& w, const CandidateEval& k) const {
    return !score_basis_.moves_data || clusters_[k.cluster].cluster->holds_dataset(w.data.dataset) ? 1.0 : 0.0;
  }
  // The one formula (inline, of values alone: Decide ranks every candidate with its
  // inputs held in locals, which stores to the candidates cannot alias).
  static ScoreBreakdown Score(const model::ScoringWeights& weights, const ScoreBasis& basis, double locality,
                              double lua, const CandidateEval& k) {
    ScoreBreakdown s;
    const double cost = static_cast<double>(k.cost);
    s.cost = cost <= 0 ? 1.0 : static_cast<double>(std::max<int64_t>(basis.min_cost, 0)) / cost;
    s.locality = locality;
    s.fragmentation = k.quality;
    s.onprem = k.onprem ? 1.0 : 0.0;
    s.lua = lua;
    s.total = weights.cost * s.cost + weights.locality * s.locality + weights.fragmentation * s.fragmentation +
              weights.onprem * s.onprem + s.lua;  // hooks apply each policy's own lua weight
    return s;
  }
  // The verdict of cluster c as the decision saw it.
  ClusterVerdict VerdictOf(const model::Workload& w, const ShapeClass& shape, size_t c, const Evaluation& e,
                           const std::string& burst_block) const;
  // Fills d.verdicts (and d.verdict_groups on large federations), best candidates first
  // among the listed ones when not all are listed (placer_explain.cc).
  void Explain(const model::Workload& w, const ShapeClass& shape, const std::string& burst_block,
               std::optional<size_t> chosen, Decision& d) const;
  // Rejects `w` when no cluster allows it: the rules that denied, and why.
  void Reject(const model::Workload& w, const ShapeClass& shape, Decision& d) const;
  // The rule that decided about cluster c ("" when it is eligible and not held back).
  std::string_view RuleOf(const ShapeClass& shape, size_t c) const;
  // "cluster: reason" (or "cluster: rule") for every cluster `include(rule, eligible)`
  // selects, joined by "; "; on large federations grouped by rule instead
  // ("capacity: no free capacity ... (612 clusters: a, b, c, ...)").
  std::string ListReasons(const model::Workload& w, const ShapeClass& shape, const std::string& burst_block,
                          const std::function<bool(std::string_view, bool)>& include, bool rules_only) const;
  // Clusters grouped by rule (large federations): the shape's fixed groups, then this
  // decision's groups of eligible clusters, leaving out `listed` ones.
  std::vector<VerdictGroup> GroupVerdicts(const model::Workload& w, const ShapeClass& shape,
                                          const std::string& burst_block,
                                          const std::function<bool(std::string_view, bool)>& include,
                                          const std::vector<uint32_t>* listed) const;  // sorted
  bool ExplainsEveryCluster() const { return clusters_.size() <= snapshot_.explain_clusters; }
  // Policy rules, residency and Lua filter for one cluster; fills pool_allowed.
  // `pool_denials[p]` receives the rule (and reason) that excluded node pool p, so a
  // later hardware mismatch can name the rule that really ruled the cluster out.
  bool PassesPolicies(const model::Workload& w, const nlohmann::json& wv, const std::vector<bool>& applies, size_t c,
                      ClusterVerdict& verdict, std::vector<bool>& pool_allowed,
                      std::vector<std::pair<std::string, std::string>>& pool_denials);
  // Where on cluster c `w` fits now (search.h), or nothing.
  // `demands`: the shape class's (ShapeCluster::demands), when the caller has them.
  std::optional<Placement> PlacementOn(const model::Workload& w, size_t c, const std::vector<bool>& pool_allowed,
                                       const PoolDemands* demands = nullptr) const;
  std::optional<Candidate> FindCandidate(const model::Workload& w, size_t c, const std::vector<bool>& pool_allowed,
                                         const PoolDemands* demands = nullptr);
  // Places `w` as `candidate` says: the cluster's state, the tenant's usage (`tenant_state`
  // is w's tenant's), and d's binding, cost and reason.
  void Bind(const model::Workload& w, const Candidate& candidate, const ScoreBreakdown& score,
            TenantState& tenant_state, Decision& d);
  // Why bursting to the cloud is not yet allowed ("" when it is).
  std::string BurstBlock(const model::Workload& w) const;
  // Budget check of a projected cost on one cluster; "" when within budget, else why.
  // `never` is set when the cost exceeds the whole limit, so waiting cannot help.
  // The cost is converted into the budget's currency (exchange_rates.h); a cost no rate
  // converts is over budget, saying so.
  std::string OverBudget(const model::Cluster& cluster, const TenantState& t, const Money& cost, bool& never) const;
  // Whether `cost` exceeds w's maxCost, converted into its currency; "" when it does not,
  // else why (a cost no rate converts exceeds it: fail closed).
  std::string OverMaxCost(const model::Workload& w, const Money& cost) const;
  // `cost` in `currency` through the repository's rates; nullopt when none converts it.
  std::optional<Money> InCurrency(const Money& cost, const std::string& currency) const;
  // "168.00 USD", or "168.00 USD (154.56 EUR at 0.92 EUR per USD, rates of 2026-11-02)".
  std::string CostText(const Money& cost, const Money& converted) const;
  // d.exchange_rates: the rates between the clusters its verdicts priced (and its chosen
  // one) and w's maxCost and its tenant's budget currencies.
  void RecordRates(const model::Workload& w, const TenantState& t, Decision& d) const;
  void RaiseAlerts(const TenantState& before, const TenantState& after, Decision& d) const;
  // The tenant whose queue head goes next: highest priority, then under its guarantee,
  // then lowest dominant share per weight, then name.
  bool ServedBefore(const std::string& a, const TenantState& ta, const model::Workload& wa, const std::string& b,
                    const TenantState& tb, const model::Workload& wb) const;
  double ShareOf(const TenantState& tenant) const;
  TenantState& Tenant(const std::string& name);

  // Preemption (preemption.cc): frees the minimal set of lower-priority, preemptible
  // running work on on-prem cluster `c` that makes `w` fit, and returns the candidate.
  std::optional<Candidate> PreemptFor(const model::Workload& w, size_t c, const std::vector<bool>& pool_allowed,
                                      Decision& d);
  bool VictimAllowed(const model::Workload& w, const RunningEntry& r, std::map<std::string, int64_t>& freed) const;
  void ReleaseEntry(ClusterState& state, const RunningEntry& r) const;

  const Snapshot& snapshot_;
  const model::Config& config_;
  model::CurrencyConverter converter_;  // config_'s exchange rates
  std::unique_ptr<PlacerCaches> own_caches_;  // without a memo: this plan's alone
  PlacerCaches& caches_;                      // own_caches_, or the memo's
  uint64_t caches_mix_epoch_ = 0;             // caches_.mix_epoch (read by the candidate scan)
  // Each cluster state's generation, packed for the candidate scan over every eligible cluster
  // (a ClusterEntry is hundreds of bytes). Refreshed wherever a plan changes a state:
  // SetUpClusters, Bind, PreemptFor.
  std::vector<uint64_t> generation_of_;
  std::vector<ClusterEntry>& clusters_;       // sorted by name
  std::vector<ActiveRule> rules_;
  model::ScoringWeights weights_;
  model::BurstThresholds burst_;
  // By name; looked up for every running workload at set-up and every decision (hashed:
  // no order is read, and a queue keeps its tenant's state at a stable address).
  std::unordered_map<std::string, TenantState> tenants_;
  std::vector<RunningEntry> running_;
  // Indices into running_ grouped by cluster (snapshot order within each), and where
  // each cluster's group starts (one more entry than clusters).
  std::vector<uint32_t> running_order_;
  std::vector<uint32_t> running_begin_;
  std::span<const uint32_t> RunningOn(size_t c) const {
    return {running_order_.data() + running_begin_[c], running_begin_[c + 1] - running_begin_[c]};
  }
  // By cluster: the lowest priority of its preemptible running work when the plan began
  // (INT_MAX: none). Preemption only ever removes entries, so work of this priority or
  // lower can preempt nothing there, and PreemptFor skips the scan of its running work.
  std::vector<int> lowest_preemptible_priority_;
  // Classes (placer_classes.cc). A read set is what the Lua hooks looked at for one
  // evaluation; classes are keyed by the workload's observations at those reads.
  struct ReadSet {
    std::vector<ViewRead> reads;
    std::unordered_map<std::string, size_t> classes;  // key -> index into policy_classes_
  };
  std::vector<ReadSet>& read_sets_;
  std::vector<std::unique_ptr<PolicyClass>>& policy_classes_;
  std::unordered_map<std::string, std::unique_ptr<ShapeClass>>& shape_classes_;
  std::unique_ptr<PolicyClass> uncached_policy_;  // for a workload whose policy class is not shared
  std::unique_ptr<ShapeClass> uncached_shape_;
  std::vector<Evaluation> evaluations_;         // by cluster index; reused by every decision
  // The current decision's clusters on which its cost cap or budget rules out some of
  // the shape's pools, not all: the shape's entry with just the pools within them.
  std::unordered_map<uint32_t, ShapeCluster> capped_;
  // How many of the current decision's eligible clusters each hold has (EvaluationHold).
  // Decide keeps it as it sets evaluations_, so explanations need not count a thousand
  // clusters again in every decision.
  std::array<int64_t, kEvaluationHoldKinds> hold_counts_{};
  // Growing it leaves the new slots as they are (Decide writes every slot it keeps
  // before anything reads it): a decision makes room for a thousand at a time.
  template <typename T>
  struct UninitialisedAllocator : std::allocator<T> {
    UninitialisedAllocator() = default;
    template <typename U>
    UninitialisedAllocator(const UninitialisedAllocator<U>&) noexcept {}
    template <typename U>
    void construct(U* p) noexcept {
      ::new (static_cast<void*>(p)) U;
    }
    template <typename U, typename... Args>
    void construct(U* p, Args&&... args) {
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
  };
  using Candidates = std::vector<CandidateEval, UninitialisedAllocator<CandidateEval>>;
  Candidates candidates_;                       // the current decision's candidates (see Decide)
  ScoreBasis score_basis_;                      // the current decision's (see ScoreOf)
  int onprem_queue_depth_ = 0;
  double fleet_gpus_ = 0;     // GPUs present in every cluster, for dominant shares
  double window_hours_ = 0;   // DecayedWindowHours(half-life)
  bool needs_views_ = false;  // rules or hooks read the workload's JSON view
  bool admit_hooks_ = false;  // snapshot.hooks has admit hooks (asked once per plan)
  nlohmann::json scratch_view_;  // ViewOf's answer when the view is not cached
  model::ViewMembers class_members_;  // UpdateClassMembers
  bool class_view_whole_ = false;
  std::deque<NodeFits> own_fits_;  // resolutions not cached (a node was missing or added)
  size_t views_read_ = 0;        // cached views this plan read (SweepViews)
};

// What the placer keeps between plans when the snapshot brings a PlanMemo (and builds
// afresh for every plan when it does not): the clusters' views and states, the policy
// and shape classes, and the fit cache. Everything here is a function of the config, the
// hooks and the per-cluster inputs recorded with it, so a plan is the same with or
// without it (plan_memo_property_test.cc replays random pass sequences both ways).
struct PlacerCaches {
  // What the classes were evaluated for; a plan with another config, revision or hooks
  // starts every cache over.
  const model::Config* config = nullptr;
  const PolicyHooks* hooks = nullptr;
  std::string revision;
  std::vector<Placer::ClusterEntry> clusters;
  std::unordered_map<std::string_view, size_t> cluster_index;  // name (owned by the config) -> index
  std::vector<Placer::ReadSet> read_sets;
  std::vector<std::unique_ptr<Placer::PolicyClass>> policy_classes;
  std::unordered_map<std::string, std::unique_ptr<Placer::ShapeClass>> shape_classes;
  std::unordered_map<std::string, std::unique_ptr<Placer::FitTable>> fit_tables;  // by request (ShapeKey)
  // A rebuilt state's generation starts a new epoch (epoch << 32), so a fit cached for an
  // earlier state of the same cluster never matches it.
  uint64_t epoch = 0;
  // The pod mix the packers judge against (its fingerprint) and an epoch bumped when it
  // changes: fits found against another mix are stale (where nothing fits, the mix
  // played no part, and that answer stands).
  uint64_t mix_fingerprint = 0;
  uint64_t mix_epoch = 0;
  uint64_t plans = 0;  // plans made with these caches
  // Workloads' JSON views by model::WorkloadViewKey, with the plan that last read each:
  // a waiting workload is decided again in every pass, and its view is the same. A view
  // is kept from a workload's second plan on (null before: most are placed in their
  // first). Bounded (a view is a few KB): beyond the cap a view is built and dropped.
  static constexpr size_t kMaxCachedViews = 4096;
  struct CachedView {
    nlohmann::json view;
    uint64_t plan = 0;
  };
  std::unordered_map<uint64_t, CachedView> workload_views;
  // Running work's node fits (Placer::Resolve) by the binding and request, the cluster and
  // its node layout (ClusterEntry::layout), with the plan that last used each: a cluster
  // whose state is rebuilt reserves the same running work again. Kept only where every
  // node of the binding was found as it was. Swept to about what the running work needs.
  struct ResolvedBinding {
    Placer::NodeFits nodes;
    uint64_t plan = 0;
  };
  std::unordered_map<uint64_t, ResolvedBinding> resolved;
  PlanMemo::Stats stats;  // of the plan that last used these caches
};

}  // namespace gpufed::placement
