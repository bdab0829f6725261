#include "controller/placement/placer.h"

#include <algorithm>
#include <cassert>
#include <deque>
#include <string_view>
#include <unordered_map>

#include "controller/common/text.h"
#include "controller/model/views.h"
#include "controller/placement/fair_share.h"
#include "controller/placement/matcher.h"
#include "controller/placement/node_packer.h"
#include "controller/placement/placer_rules.h"
#include "controller/placement/search.h"

namespace gpufed::placement {
Placer::Placer(const Snapshot& snapshot)
    : snapshot_(snapshot),
      config_(*snapshot.config),
      converter_(config_.Converter()),
      own_caches_(snapshot.memo == nullptr ? std::make_unique<PlacerCaches>() : nullptr),
      caches_(snapshot.memo == nullptr ? *own_caches_ : *snapshot.memo->caches_),
      clusters_(caches_.clusters),
      read_sets_(caches_.read_sets),
      policy_classes_(caches_.policy_classes),
      shape_classes_(caches_.shape_classes) {
  std::vector<const model::Policy*> policies;
  policies.reserve(config_.policies.size());
  for (const model::Policy& p : config_.policies) policies.push_back(&p);
  std::sort(policies.begin(), policies.end(),
            [](const auto* a, const auto* b) { return a->metadata.name < b->metadata.name; });
  bool weights_set = false;
  for (const model::Policy* p : policies) {
    for (const model::Rule& r : p->rules) rules_.push_back({p, &r});
    if (p->weights && !weights_set) {
      weights_ = *p->weights;
      weights_set = true;
    }
    if (p->burst.queue_wait && !burst_.queue_wait) burst_.queue_wait = p->burst.queue_wait;
    if (p->burst.queue_depth && !burst_.queue_depth) burst_.queue_depth = p->burst.queue_depth;
  }
  needs_views_ = !rules_.empty() || snapshot.hooks != nullptr;
  admit_hooks_ = snapshot.hooks != nullptr && snapshot.hooks->HasAdmitHooks();
  window_hours_ = DecayedWindowHours(snapshot.fair_share_half_life.millis() > 0 ? snapshot.fair_share_half_life
                                                                                : kDefaultFairShareHalfLife);
  onprem_queue_depth_ = snapshot.onprem_queue_depth;
  for (const auto& [name, usage] : snapshot.usage) tenants_[name].usage = usage;
  for (const model::Tenant& t : config_.tenants) {
    auto [it, added] = tenants_.try_emplace(t.metadata.name);
    it->second.tenant = &t;
    if (added) it->second.usage = TenantUsage{0, t.budget.spent, t.budget.cloud_spent, 0};
  }
  // The pod mix every cluster's packing policy judges fragmentation against: the one the
  // snapshot brings, else the work this plan sees, waiting and running.
  auto mix = std::make_shared<PodMix>();
  for (const auto& [request, count] : snapshot.pod_mix) mix->Add(request, count);
  if (snapshot.pod_mix.empty()) {
    for (const model::Workload* w : snapshot.pending) {
      if (w != nullptr) mix->Add(w->resources);
    }
    for (const RunningWorkload& r : snapshot.running) {
      if (r.workload != nullptr) mix->Add(r.workload->resources);
    }
  }
  SetUpClusters(mix, mix->Fingerprint());
  NoteOutages();
  UpdateClassMembers();
  evaluations_.resize(clusters_.size());
}

Placer::~Placer() = default;

Placer::TenantState& Placer::Tenant(const std::string& name) { return tenants_[name]; }

double Placer::ShareOf(const TenantState& t) const {
  return DominantShare(t.usage.gpu_milli_in_use / 1000.0, t.usage.decayed_gpu_hours, t.tenant ? t.tenant->weight : 1,
                       fleet_gpus_, window_hours_);
}

bool Placer::ServedBefore(const std::string& a, const TenantState& ta, const model::Workload& wa, const std::string& b,
                          const TenantState& tb, const model::Workload& wb) const {
  if (wa.priority != wb.priority) return wa.priority > wb.priority;
  const bool under_a = ta.tenant && ta.usage.gpu_milli_in_use < int64_t{ta.tenant->guaranteed_gpus} * 1000;
  const bool under_b = tb.tenant && tb.usage.gpu_milli_in_use < int64_t{tb.tenant->guaranteed_gpus} * 1000;
  if (under_a != under_b) return under_a;
  const double fa = ShareOf(ta), fb = ShareOf(tb);
  if (fa != fb) return fa < fb;
  return a < b;
}

Plan Placer::Run() {
  Plan plan;
  plan.revision = config_.revision;
  // Per tenant: priority first, then submission time, then name. Each queue knows its
  // tenant's state (the choice below compares them for every decision).
  struct TenantQueue {
    std::deque<const model::Workload*> work;
    TenantState* state = nullptr;
  };
  std::map<std::string, TenantQueue> queues;
  for (const model::Workload* w : snapshot_.pending) queues[w->tenant].work.push_back(w);
  for (auto& [tenant, entry] : queues) {
    entry.state = &Tenant(tenant);  // a std::map's elements stay where they are
    std::deque<const model::Workload*>& queue = entry.work;
    std::sort(queue.begin(), queue.end(), [](const auto* a, const auto* b) {
      if (a->priority != b->priority) return a->priority > b->priority;
      if (a->submitted_at != b->submitted_at) return a->submitted_at < b->submitted_at;
      return a->metadata.name < b->metadata.name;
    });
  }
  // Across tenants the order is decided one workload at a time, so a placement counts
  // towards its tenant's share before the next choice (and a queued one does not).
  plan.decisions.reserve(snapshot_.pending.size());
  while (true) {
    TenantQueue* best = nullptr;
    const std::string* best_name = nullptr;
    for (auto& [tenant, entry] : queues) {
      if (entry.work.empty()) continue;
      if (best == nullptr ||
          ServedBefore(tenant, *entry.state, *entry.work.front(), *best_name, *best->state, *best->work.front())) {
        best = &entry;
        best_name = &tenant;
      }
    }
    if (best == nullptr) break;
    const model::Workload* w = best->work.front();
    best->work.pop_front();
    plan.decisions.push_back(Decide(*w));
    const Decision& d = plan.decisions.back();
    plan.alerts.insert(plan.alerts.end(), d.alerts.begin(), d.alerts.end());
    if (snapshot_.on_decision) snapshot_.on_decision(d);
  }
  SweepViews();
  SweepResolved();
  return plan;
}

// What cost caps and budgets leave of a decision's shape class (ApplyCostCaps).
struct Placer::Eligibility {
  bool any = false;             // a cluster within the caps (else the workload is rejected)
  bool onprem = false;          // an on-prem cluster within the caps and the budget
  bool cloud = false;           // a cloud cluster within the caps and the budget
  bool budget_blocked = false;  // a cluster held back by the tenant's budget
  bool budget_never = true;     // ... each by more than the whole limit
};

// Where the decision's workload fits now (FindCandidates); the candidates are in
// candidates_, on-prem ones first.
struct Placer::CandidateSearch {
  size_t onprem_candidates = 0;                // candidates_[0, this) are on-prem
  std::map<size_t, Candidate> by_preemption;   // by cluster: candidates made by preempting
  std::string block;                           // why the burst gate held the cloud back, or ""
  std::string burst_note;                      // the cloud took it because on-prem was full
};

template <typename Change>
void Placer::ChangeHold(Evaluation& e, Change change) {
  --hold_counts_[e.Hold()];
  change(e);
  ++hold_counts_[e.Hold()];
}

// Admit, filter, find where it fits, score, then queue or bind: each step is a function
// below, in that order.
Decision Placer::Decide(const model::Workload& w) {
  Decision d;
  d.workload = w.metadata.name;
  d.tenant = w.tenant;
  d.priority = w.priority;
  TenantState& tenant_state = Tenant(w.tenant);
  if (!Admit(w, tenant_state, d)) return d;

  // Cost caps and budgets on every cluster the policies and hardware allow (the policy
  // and shape verdicts are shared by every workload of the class).
  ShapeClass& shape = ShapeClassFor(w);
  const Eligibility eligible = ApplyCostCaps(w, shape, tenant_state);
  if (!eligible.any) {
    Reject(w, shape, d);
    RecordRates(w, tenant_state, d);
    return d;
  }
  CandidateSearch found = FindCandidates(w, shape, eligible, d);
  ScoreCandidates(w, *shape.policy);
  const std::optional<size_t> chosen = ChooseCandidate(found);
  if (!chosen) {
    DecideQueued(w, shape, eligible, found.block, d);
    RecordRates(w, tenant_state, d);
    return d;
  }
  DecidePlaced(w, shape, tenant_state, found, *chosen, d);
  RecordRates(w, tenant_state, d);
  return d;
}

bool Placer::Admit(const model::Workload& w, const TenantState& tenant_state, Decision& d) {
  // Lua admit hooks (they see the whole view), then quota.
  if (admit_hooks_) {
    for (const HookOutcome& o : snapshot_.hooks->Admit(ViewOf(w), snapshot_.now.seconds())) {
      if (o.allowed && !o.error) continue;
      if (!o.enforced) {
        d.warnings.push_back("policy " + o.policy + (o.error ? " error (ignored): " : " would not admit: ") + o.reason);
        continue;
      }
      d.outcome = Outcome::kRejected;
      d.denied_by = {o.error ? kRulePolicyError : o.policy};
      d.reason = o.error ? "not admitted: policy error: " + o.reason : "not admitted by " + o.policy + ": " + o.reason;
      return false;
    }
  }
  const model::Tenant* tenant = tenant_state.tenant;
  const TenantUsage& usage = tenant_state.usage;
  const int64_t requested_milli = RequestedGpuMilli(w.resources);
  if (tenant != nullptr && tenant->max_gpus && requested_milli > int64_t{*tenant->max_gpus} * 1000) {
    // More than the tenant may ever hold at once: waiting cannot help, so it is refused now.
    d.outcome = Outcome::kRejected;
    d.denied_by = {kRuleTenantQuota};
    d.reason = "tenant quota: needs " + FormatGpus(requested_milli) + " GPUs, more than tenant " +
               tenant->metadata.name + "'s maxGpus of " + std::to_string(*tenant->max_gpus) +
               "; it can never be admitted";
    return false;
  }
  if (tenant != nullptr && tenant->max_gpus && requested_milli > 0 &&
      usage.gpu_milli_in_use + requested_milli > int64_t{*tenant->max_gpus} * 1000) {
    d.outcome = Outcome::kQueued;
    d.reason = "tenant quota: " + FormatGpus(usage.gpu_milli_in_use) + " of " + std::to_string(*tenant->max_gpus) +
               " GPUs in use, needs " + FormatGpus(requested_milli);
    return false;
  }
  return true;
}

Placer::Eligibility Placer::ApplyCostCaps(const model::Workload& w, const ShapeClass& shape,
                                          const TenantState& tenant_state) {
  const model::Tenant* tenant = tenant_state.tenant;
  const bool has_budget = tenant != nullptr && (tenant->budget.limit || tenant->budget.cloud_limit);
  Eligibility eligible;
  candidates_.clear();  // filled by FindCandidates; Explain reads it
  if (!capped_.empty()) capped_.clear();
  for (uint32_t c : shape.eligible) evaluations_[c] = Evaluation();
  hold_counts_ = {};
  hold_counts_[0] = static_cast<int64_t>(shape.eligible.size());
  if (!w.max_cost && !has_budget) {
    // No caps: every cluster of the shape class stays eligible.
    eligible.onprem = !shape.onprem.empty();
    eligible.cloud = !shape.cloud.empty();
    eligible.any = eligible.onprem || eligible.cloud;
    return eligible;
  }
  for (const uint32_t c : shape.eligible) {
    Evaluation& e = evaluations_[c];
    const ShapeCluster& sc = shape.clusters[c];
    const model::Cluster& cluster = *clusters_[c].cluster;
    auto cost_on = [&](int p) {
      return EstimateCostAt(cluster, sc.prices[static_cast<size_t>(p)], w, sc.gpu_milli[static_cast<size_t>(p)]).total;
    };
    const Money cost = cost_on(sc.cheapest_pool);
    if (w.max_cost && !OverMaxCost(w, cost).empty()) {
      ChangeHold(e, [](Evaluation& x) { x.stage = Evaluation::Stage::kMaxCost; });
      continue;
    }
    eligible.any = true;
    bool never = false;
    if (has_budget && !OverBudget(cluster, tenant_state, cost, never).empty()) {
      ChangeHold(e, [](Evaluation& x) { x.stage = Evaluation::Stage::kBudget; });
      eligible.budget_blocked = true;
      eligible.budget_never = eligible.budget_never && never;
      continue;
    }
    if (sc.dearest_pool != sc.cheapest_pool && !WithinCaps(w, cluster, tenant_state, cost_on(sc.dearest_pool))) {
      // A dearer pool is over them: the decision may use only the pools within them, so
      // the pool it binds (and prices) is one the caps were judged on.
      ShapeCluster& narrowed = capped_[c] = sc;
      for (size_t p = 0; p < narrowed.pools.size(); ++p) {
        if (!narrowed.pools[p] || WithinCaps(w, cluster, tenant_state, cost_on(static_cast<int>(p)))) continue;
        narrowed.pools[p] = false;
        narrowed.demands[p].reset();
        if (p < 63 && narrowed.pool_mask != kUnsharedPools) narrowed.pool_mask &= ~(uint64_t{1} << p);
      }
    }
    (clusters_[c].onprem ? eligible.onprem : eligible.cloud) = true;
  }
  return eligible;
}

bool Placer::WithinCaps(const model::Workload& w, const model::Cluster& cluster, const TenantState& t,
                        const Money& cost) const {
  if (w.max_cost && !OverMaxCost(w, cost).empty()) return false;
  bool never = false;
  return OverBudget(cluster, t, cost, never).empty();
}

// This runs for every eligible cluster of every decision. What it reads is held in
// locals, and candidates are written through a local pointer into storage made for the
// whole group, so no store makes the compiler read the placer's members again. Each is
// priced as it is found: without a dataset to move the cost is the GPU part, from the
// price the fit cache already holds (no walk to the cluster's price table).
void Placer::EvaluateGroup(const model::Workload& w, ShapeClass& shape, const std::vector<uint32_t>& group,
                           bool onprem) {
  Candidates& candidates = candidates_;
  const bool moves_data = !w.data.dataset.empty();
  const size_t before = candidates.size();
  candidates.resize(before + group.size());
  CandidateEval* out = candidates.data() + before;
  Evaluation* evaluations = evaluations_.data();
  const CachedFit* fits = shape.fits->fits.data();
  const uint64_t* pool_masks = shape.pool_masks.data();
  const uint64_t* generations = generation_of_.data();
  const uint64_t mix_epoch = caches_mix_epoch_;
  auto next = static_cast<int32_t>(before);
  int64_t unfit = 0;  // evaluated, no room: hold 0 becomes 3 (capacity)
  for (uint32_t c : group) {
    Evaluation& e = evaluations[c];
    if (e.stage != Evaluation::Stage::kEligible) continue;
    assert(generations[c] == clusters_[c].state.generation);
    const uint64_t pools = capped_.empty() ? pool_masks[c] : AllowedOn(shape, c).pool_mask;
    const CachedFit& fit = FitHolds(fits[c], generations[c], pools, mix_epoch) ? fits[c] : FindFit(w, shape, c);
    assert(!e.evaluated && !e.burst_blocked);
    e.evaluated = true;
    if (!fit.fits) {
      ++unfit;
      continue;
    }
    e.fits = true;
    e.candidate = next++;
    const int64_t cost = moves_data ? EstimateCostMicros(*clusters_[c].cluster, fit.price_micros, w, fit.gpu_milli)
                                    : GpuCostMicros(fit.price_micros, w, fit.gpu_milli);
    *out++ = CandidateEval{c, onprem, fit.quality, ScaledCost(cost, clusters_[c].cost_scale), 0.0};
  }
  candidates.resize(static_cast<size_t>(next));
  hold_counts_[0] -= unfit;
  hold_counts_[3] += unfit;
}

Placer::CandidateSearch Placer::FindCandidates(const model::Workload& w, ShapeClass& shape, const Eligibility& eligible,
                                               Decision& d) {
  // Clusters where it fits now: on-prem ones first, each group in name order.
  CandidateSearch found;
  EvaluateGroup(w, shape, shape.onprem, true);
  bool onprem_now = !candidates_.empty();
  if (!onprem_now && eligible.onprem) {
    // Urgent work takes on-prem capacity from lower-priority preemptible work before
    // anything goes to the cloud.
    for (uint32_t c : shape.onprem) {
      Evaluation& e = evaluations_[c];
      if (e.stage != Evaluation::Stage::kEligible) continue;
      std::optional<Candidate> made = PreemptFor(w, c, AllowedOn(shape, c).pools, d);
      generation_of_[c] = clusters_[c].state.generation;
      if (!made) continue;
      onprem_now = true;
      ChangeHold(e, [&](Evaluation& x) {
        x.preempts = x.fits = true;
        x.candidate = static_cast<int32_t>(candidates_.size());
      });
      candidates_.push_back(CandidateEval{c, true, made->nodes.front().second.Quality(),
                                          ScaledCost(made->cost.total.micros(), clusters_[c].cost_scale), 0.0});
      found.by_preemption.emplace(c, std::move(*made));
      break;
    }
  }
  found.onprem_candidates = candidates_.size();
  if (onprem_now) {
    EvaluateGroup(w, shape, shape.cloud, false);  // scored too, so the explanation compares them
  } else if (eligible.cloud) {
    found.block = eligible.onprem ? BurstBlock(w) : "";
    if (found.block.empty()) {
      EvaluateGroup(w, shape, shape.cloud, false);
      if (eligible.onprem && candidates_.size() > found.onprem_candidates) {
        found.burst_note = "burst to cloud: on-prem is full";
      }
    } else {
      for (uint32_t c : shape.cloud) {
        Evaluation& e = evaluations_[c];
        if (e.stage == Evaluation::Stage::kEligible) ChangeHold(e, [](Evaluation& x) { x.burst_blocked = true; });
      }
    }
  }
  return found;
}

void Placer::ScoreCandidates(const model::Workload& w, const PolicyClass& policy) {
  // Cost relative to the cheapest candidate, data locality, packing, on-prem, and the
  // policies' Lua score hooks.
  score_basis_ = ScoreBasis{};
  score_basis_.moves_data = !w.data.dataset.empty();
  if (!candidates_.empty()) {
    int64_t min_cost = candidates_.front().cost;
    for (const CandidateEval& k : candidates_) min_cost = std::min(min_cost, k.cost);
    score_basis_.min_cost = min_cost;
  }
  const model::ScoringWeights weights = weights_;
  const ScoreBasis basis = score_basis_;
  const double* lua = policy.lua_scores.data();
  for (CandidateEval& k : candidates_) {
    const double locality = basis.moves_data ? LocalityOf(w, k) : 1.0;
    k.total = Score(weights, basis, locality, lua[k.cluster], k).total;
  }
}

std::optional<size_t> Placer::ChooseCandidate(const CandidateSearch& found) const {
  // The best of candidates [from, to); the first in name order on a tie.
  auto best_in = [&](size_t from, size_t to) -> std::optional<size_t> {
    std::optional<size_t> best;
    for (size_t i = from; i < to; ++i) {
      if (!best || candidates_[i].total > candidates_[*best].total) best = i;
    }
    if (!best) return std::nullopt;
    return candidates_[*best].cluster;
  };
  std::optional<size_t> chosen = best_in(0, found.onprem_candidates);
  if (!chosen && found.block.empty()) chosen = best_in(found.onprem_candidates, candidates_.size());
  return chosen;
}

void Placer::DecideQueued(const model::Workload& w, const ShapeClass& shape, const Eligibility& eligible,
                          const std::string& block, Decision& d) {
  d.outcome = Outcome::kQueued;
  const bool only_budget = !eligible.onprem && !eligible.cloud;
  const std::string parts = ListReasons(
      w, shape, block, [](std::string_view rule, bool allowed) { return allowed || rule == kRuleBudget; }, false);
  d.reason = "waiting: " + parts;
  if (eligible.budget_blocked && only_budget) {
    // Budgets queue rather than reject: the next period (or a raised limit) lets it run.
    d.reason = "tenant budget exhausted: " + parts;
    if (eligible.budget_never) d.reason += "; it costs more than the whole limit, so it waits for a higher limit";
  }
  if (eligible.onprem) ++onprem_queue_depth_;
  Explain(w, shape, block, std::nullopt, d);
}

namespace {

// "preempts a, b, 2 workloads of other tenants; ": the beneficiary's tenant reads this
// reason, so other tenants' victims are counted, not named.
std::string PreemptsNote(const std::string& tenant, const std::vector<Preemption>& preempted) {
  std::vector<std::string> names;
  size_t others = 0;
  for (const Preemption& p : preempted) {
    if (p.tenant == tenant) {
      names.push_back(p.workload);
    } else {
      ++others;
    }
  }
  if (others > 0) {
    names.push_back(std::to_string(others) + (others == 1 ? " workload" : " workloads") + " of other tenants");
  }
  return "preempts " + Join(names, ", ") + "; ";
}

}  // namespace

void Placer::DecidePlaced(const model::Workload& w, const ShapeClass& shape, TenantState& tenant_state,
                          CandidateSearch& found, size_t chosen, Decision& d) {
  // The victims PreemptFor recorded were found on-prem; they stand only if it chose there.
  std::vector<Preemption> preempted = std::move(d.preempted);
  d.preempted.clear();
  if (clusters_[chosen].cluster->is_onprem()) d.preempted = std::move(preempted);
  Explain(w, shape, found.block, chosen, d);
  auto made = found.by_preemption.find(chosen);
  // The chosen cluster had a candidate in this decision and nothing has changed its state
  // since, so FindCandidate finds one again.
  const Candidate candidate =
      made != found.by_preemption.end()
          ? std::move(made->second)
          // NOLINTNEXTLINE(bugprone-unchecked-optional-access): see above
          : *FindCandidate(w, chosen, AllowedOn(shape, chosen).pools, &AllowedOn(shape, chosen).demands);
  const TenantState before = tenant_state;
  Bind(w, candidate, ScoreOf(w, *shape.policy, candidates_[static_cast<size_t>(evaluations_[chosen].candidate)]),
       tenant_state, d);
  // The chosen cluster's verdict shows the price of the pool bound, whatever pool the
  // explanation priced it on.
  for (ClusterVerdict& v : d.verdicts) {
    if (v.cluster == d.binding.cluster) v.cost = d.cost;
  }
  RaiseAlerts(before, tenant_state, d);
  for (const ClusterVerdict& v : d.verdicts) {
    if (v.cluster == clusters_[chosen].cluster->metadata.name) {
      d.warnings.insert(d.warnings.end(), v.warnings.begin(), v.warnings.end());
    }
  }
  if (!found.burst_note.empty()) d.reason = found.burst_note + "; " + d.reason;
  if (!d.preempted.empty()) d.reason = PreemptsNote(w.tenant, d.preempted) + d.reason;
}

void Placer::Bind(const model::Workload& w, const Candidate& candidate, const ScoreBreakdown& s,
                  TenantState& tenant_state, Decision& d) {
  ClusterEntry& entry = clusters_[candidate.cluster];
  const model::Cluster& cluster = *entry.cluster;
  Placement placement{candidate.nodes, static_cast<int>(candidate.pool - cluster.node_pools.data()),
                      candidate.provision};
  const std::vector<int> used = ApplyPlacement(entry.state, placement, w.resources);
  generation_of_[candidate.cluster] = entry.state.generation;
  for (size_t m = 0; m < used.size(); ++m) {
    const NodeFit& fit = candidate.nodes[m].second;
    d.binding.nodes.push_back(entry.state.nodes[used[m]].name);
    d.binding.gpus.push_back(fit.gpus);
    d.binding.gpu_milli_each = fit.milli_each;
    d.binding.mig_profile = fit.mig_profile;
    d.binding.mig_start = fit.mig_start;
  }
  d.outcome = Outcome::kPlaced;
  d.binding.cluster = cluster.metadata.name;
  d.binding.pool = candidate.pool->name;
  d.binding.provisions_node = candidate.provision;
  int64_t ready_ms = candidate.provision ? cluster.elasticity.provision_delay.millis() : 0;
  ready_ms += static_cast<int64_t>(candidate.cost.transfer_seconds * 1000);
  d.binding.ready_after = Duration::FromMillis(ready_ms);
  d.cost = candidate.cost.total;

  TenantUsage& usage = tenant_state.usage;
  usage.gpu_milli_in_use += RequestedGpuMilli(w.resources);
  // Spend is kept in the budget's currency (tenant_spend.h); the budget check passed, so
  // a rate converts the cost whenever a budget needs one.
  const std::string& currency = tenant_state.tenant != nullptr && !tenant_state.tenant->budget.Currency().empty()
                                    ? tenant_state.tenant->budget.Currency()
                                    : usage.spent.currency();
  const Money spend = InCurrency(d.cost, currency).value_or(d.cost);
  auto add = [&](Money& total) {
    Result<Money> sum = total.Plus(spend);
    if (sum.ok()) {
      total = *sum;
    } else {
      d.warnings.push_back("tenant spend not updated: " + sum.status().message());
    }
  };
  add(usage.spent);
  if (!cluster.is_onprem()) add(usage.cloud_spent);

  char score[32];
  std::snprintf(score, sizeof score, "%.2f", s.total);
  d.reason = "best score " + std::string(score);
  if (candidate.provision) d.reason += "; adds a node (ready in " + cluster.elasticity.provision_delay.ToString() + ")";
  if (candidate.cost.egress.micros() > 0) d.reason += "; moves dataset " + w.data.dataset;
  // Name the slice: "small inference gets a MIG slice" is what authors test for.
  if (!d.binding.mig_profile.empty()) d.reason += "; MIG slice " + d.binding.mig_profile;
  if (d.binding.nodes.size() > 1 && w.resources.nodes <= 1) {
    d.reason += "; spread over " + std::to_string(d.binding.nodes.size()) + " nodes";
  }
}

}  // namespace gpufed::placement
