#include "controller/placement/placer.h"

#include <algorithm>
#include <set>

#include "controller/common/text.h"
#include "controller/model/views.h"
#include "controller/placement/matcher.h"

namespace gpufed::placement {
namespace {

// Built-in checks, named like rules so explanations and PolicyTests can refer to them.
constexpr const char* kRuleResidency = "data-residency";
constexpr const char* kRuleHardware = "hardware";
constexpr const char* kRuleMaxCost = "max-cost";
constexpr const char* kRuleBudget = "tenant-budget";
constexpr const char* kRuleCapacity = "capacity";
constexpr const char* kRuleBurst = "burst";
constexpr const char* kRulePolicyError = "policy-error";

// What a request counts against quotas and fair share: whole GPUs, or the share asked.
int64_t RequestedGpuMilli(const model::ResourceRequest& r) {
  if (r.gpu_share.milli() > 0) return r.gpu_share.milli();
  if (!r.mig_profile.empty()) {
    std::optional<MigProfileInfo> info = ParseMigProfile(r.mig_profile);
    return info ? info->compute_slices * kMilliPerGpu / kMigComputeSlices : kMilliPerGpu;
  }
  return int64_t{r.total_gpus()} * kMilliPerGpu;
}

std::string FormatGpus(int64_t milli) {
  char text[32];
  std::snprintf(text, sizeof text, milli % 1000 == 0 ? "%.0f" : "%.2f", milli / 1000.0);
  return text;
}

int64_t GpuMilli(const model::ResourceRequest& r, const GpuDemand& d) {
  int per_node = d.milli_each * d.gpus;
  return int64_t{per_node} * std::max(1, r.nodes);
}

bool AllConditions(const std::vector<model::Condition>& conditions, const nlohmann::json& view, bool node_level) {
  for (const model::Condition& c : conditions) {
    if (c.on_node == node_level && !ConditionHolds(c, view)) return false;
  }
  return true;
}

const model::Condition* FirstFailing(const std::vector<model::Condition>& conditions, const nlohmann::json& view) {
  for (const model::Condition& c : conditions) {
    if (!c.on_node && !ConditionHolds(c, view)) return &c;
  }
  return nullptr;
}

}  // namespace

Placer::Placer(const Snapshot& snapshot) : snapshot_(snapshot), config_(*snapshot.config), usage_(snapshot.usage) {
  std::vector<const model::Cluster*> sorted;
  for (const model::Cluster& c : config_.clusters) sorted.push_back(&c);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->metadata.name < b->metadata.name; });
  for (const model::Cluster* c : sorted) {
    ClusterEntry entry{c, model::ClusterView(*c), {}, BuildClusterState(*c)};
    for (const model::NodePool& pool : c->node_pools) entry.pool_views.push_back(model::NodePoolView(pool));
    clusters_.push_back(std::move(entry));
  }
  std::vector<const model::Policy*> policies;
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
  onprem_queue_depth_ = snapshot.onprem_queue_depth;
  for (const model::Tenant& t : config_.tenants) {
    if (usage_.count(t.metadata.name)) continue;
    usage_[t.metadata.name] = TenantUsage{0, t.budget.spent, t.budget.cloud_spent};
  }
}

std::vector<const model::Workload*> Placer::FairOrder() const {
  // Per tenant: priority first, then submission time, then name.
  std::map<std::string, std::deque<const model::Workload*>> queues;
  for (const model::Workload* w : snapshot_.pending) queues[w->tenant].push_back(w);
  for (auto& [tenant, queue] : queues) {
    std::stable_sort(queue.begin(), queue.end(), [](const auto* a, const auto* b) {
      if (a->priority != b->priority) return a->priority > b->priority;
      if (a->submitted_at != b->submitted_at) return a->submitted_at < b->submitted_at;
      return a->metadata.name < b->metadata.name;
    });
  }
  // Across tenants: highest priority head; then a tenant under its guarantee; then the
  // lowest GPU share per unit of weight (weighted fair share); then the name.
  std::map<std::string, double> share;
  for (const auto& [tenant, queue] : queues) {
    auto it = usage_.find(tenant);
    share[tenant] = it == usage_.end() ? 0 : it->second.gpu_milli_in_use / 1000.0;
  }
  std::vector<const model::Workload*> order;
  order.reserve(snapshot_.pending.size());
  while (true) {
    const std::string* best = nullptr;
    auto better = [&](const std::string& a, const std::string& b) {
      const model::Workload* wa = queues[a].front();
      const model::Workload* wb = queues[b].front();
      if (wa->priority != wb->priority) return wa->priority > wb->priority;
      const model::Tenant* ta = config_.FindTenant(a);
      const model::Tenant* tb = config_.FindTenant(b);
      bool under_a = ta && share[a] < ta->guaranteed_gpus;
      bool under_b = tb && share[b] < tb->guaranteed_gpus;
      if (under_a != under_b) return under_a;
      double fa = share[a] / (ta ? ta->weight : 1), fb = share[b] / (tb ? tb->weight : 1);
      if (fa != fb) return fa < fb;
      return a < b;
    };
    for (auto& [tenant, queue] : queues) {
      if (!queue.empty() && (best == nullptr || better(tenant, *best))) best = &tenant;
    }
    if (best == nullptr) break;
    const model::Workload* w = queues[*best].front();
    queues[*best].pop_front();
    share[*best] += RequestedGpuMilli(w->resources) / 1000.0;
    order.push_back(w);
  }
  return order;
}

Plan Placer::Run() {
  Plan plan;
  plan.revision = config_.revision;
  for (const model::Workload* w : FairOrder()) plan.decisions.push_back(Decide(*w));
  return plan;
}

bool Placer::PassesPolicies(const model::Workload& w, const nlohmann::json& wv, const std::vector<bool>& applies,
                            size_t c, ClusterVerdict& verdict, std::vector<bool>& pool_allowed,
                            std::vector<std::pair<std::string, std::string>>& pool_denials) {
  const ClusterEntry& entry = clusters_[c];
  for (size_t r = 0; r < rules_.size(); ++r) {
    if (!applies[r]) continue;
    const model::Rule& rule = *rules_[r].rule;
    std::string failure;
    if (const model::Condition* failed = FirstFailing(rule.require, entry.view)) {
      failure = DescribeFailure(*failed, entry.view);
    } else {
      bool any_pool = false;
      std::vector<bool> rule_pools(pool_allowed.size(), false);
      for (size_t p = 0; p < entry.pool_views.size(); ++p) {
        rule_pools[p] = AllConditions(rule.require, entry.pool_views[p], /*node_level=*/true);
        any_pool = any_pool || (rule_pools[p] && pool_allowed[p]);
      }
      if (!any_pool) {
        failure = "no node pool satisfies the rule's node requirements";
      } else if (rules_[r].policy->enforcement == model::Enforcement::kDeny) {
        for (size_t p = 0; p < pool_allowed.size(); ++p) {
          if (pool_allowed[p] && !rule_pools[p]) {
            std::string why;
            for (const model::Condition& cond : rule.require) {
              if (cond.on_node && !ConditionHolds(cond, entry.pool_views[p])) {
                why = DescribeFailure(cond, entry.pool_views[p]);
                break;
              }
            }
            pool_denials[p] = {rule.name, "pool " + entry.cluster->node_pools[p].name + ": " +
                                              (rule.description.empty() ? why : rule.description + " (" + why + ")")};
          }
          pool_allowed[p] = pool_allowed[p] && rule_pools[p];
        }
      }
    }
    if (failure.empty()) continue;
    std::string because = rule.description.empty() ? failure : rule.description + " (" + failure + ")";
    switch (rules_[r].policy->enforcement) {
      case model::Enforcement::kDeny:
        verdict.rule = rule.name;
        verdict.reason = because;
        return false;
      case model::Enforcement::kWarn: verdict.warnings.push_back("warn " + rule.name + ": " + because); break;
      case model::Enforcement::kDryRun: verdict.warnings.push_back("dryrun " + rule.name + " would deny: " + because); break;
    }
  }
  if (!w.data.residency.empty() &&
      std::find(w.data.residency.begin(), w.data.residency.end(), entry.cluster->zone) == w.data.residency.end()) {
    verdict.rule = kRuleResidency;
    verdict.reason = "data must stay in " + Join(w.data.residency, ", ") + "; cluster zone is " + entry.cluster->zone;
    return false;
  }
  if (snapshot_.hooks != nullptr) {
    for (const HookOutcome& o : snapshot_.hooks->Filter(wv, entry.view, snapshot_.now.seconds())) {
      if (o.allowed && !o.error) continue;
      if (!o.enforced) {
        verdict.warnings.push_back("policy " + o.policy + (o.error ? " error (ignored): " : " would deny: ") + o.reason);
        continue;
      }
      verdict.rule = o.error ? kRulePolicyError : o.policy;
      verdict.reason = o.error ? "policy error: " + o.reason : o.reason;
      return false;
    }
  }
  return true;
}

std::optional<Placer::Candidate> Placer::FindCandidate(const model::Workload& w, size_t c,
                                                       const std::vector<bool>& pool_allowed) {
  ClusterEntry& entry = clusters_[c];
  Candidate candidate;
  candidate.cluster = c;
  const model::ResourceRequest& r = w.resources;
  if (r.nodes <= 1) {
    if (auto found = FindNode(entry.state, r, pool_allowed)) {
      candidate.nodes.push_back(*found);
    } else if (entry.state.elastic_nodes_left > 0) {
      ClusterState trial = entry.state;
      if (auto added = ProvisionNode(trial, r, pool_allowed)) {
        if (auto fit = FindNode(trial, r, pool_allowed)) {
          candidate.nodes.push_back(*fit);
          candidate.provision = true;
        }
      }
    }
  } else {
    // A multi-node gang: all members in this cluster, one per node, or nothing.
    ClusterState trial = entry.state;
    for (int member = 0; member < r.nodes; ++member) {
      auto found = FindNode(trial, r, pool_allowed);
      if (!found) {
        auto added = ProvisionNode(trial, r, pool_allowed);
        if (added) found = FindNode(trial, r, pool_allowed);
        if (added) candidate.provision = true;
      }
      if (!found) return std::nullopt;
      candidate.nodes.push_back(*found);
      for (GpuState& g : trial.nodes[found->first].gpus) g.free_milli = 0;  // one member per node
    }
  }
  if (candidate.nodes.empty()) return std::nullopt;
  int pool_index = candidate.nodes.front().first < static_cast<int>(entry.state.nodes.size())
                       ? entry.state.nodes[candidate.nodes.front().first].pool
                       : -1;
  if (pool_index < 0) {
    // The fit is on a node that only exists once provisioned: its pool is the first
    // allowed pool whose shape fits (what ProvisionNode picks).
    for (size_t p = 0; p < entry.cluster->node_pools.size(); ++p) {
      if (pool_allowed[p] && PoolShapeMismatch(entry.cluster->node_pools[p], r).empty()) {
        pool_index = static_cast<int>(p);
        break;
      }
    }
  }
  candidate.pool = &entry.cluster->node_pools[pool_index];
  return candidate;
}

std::string Placer::BurstBlock(const model::Workload& w) const {
  if (!burst_.queue_wait && !burst_.queue_depth) return "";
  Duration waited = snapshot_.now.millis() > w.submitted_at.millis()
                        ? Duration::FromMillis(snapshot_.now.millis() - w.submitted_at.millis())
                        : Duration();
  if (burst_.queue_wait && waited >= *burst_.queue_wait) return "";
  if (burst_.queue_depth && onprem_queue_depth_ >= *burst_.queue_depth) return "";
  std::string why = "on-prem first: ";
  if (burst_.queue_depth) {
    why += "on-prem queue depth " + std::to_string(onprem_queue_depth_) + " below burst threshold " +
           std::to_string(*burst_.queue_depth);
  }
  if (burst_.queue_wait) {
    why += std::string(burst_.queue_depth ? " and " : "") + "waited " + waited.ToString() + " of " +
           burst_.queue_wait->ToString();
  }
  return why;
}

Decision Placer::Decide(const model::Workload& w) {
  Decision d;
  d.workload = w.metadata.name;
  d.tenant = w.tenant;
  d.priority = w.priority;
  const nlohmann::json wv = model::WorkloadView(w);
  const model::Tenant* tenant = config_.FindTenant(w.tenant);
  TenantUsage& usage = usage_[w.tenant];

  // Admit: Lua admit hooks, then quota.
  if (snapshot_.hooks != nullptr) {
    for (const HookOutcome& o : snapshot_.hooks->Admit(wv, snapshot_.now.seconds())) {
      if (o.allowed && !o.error) continue;
      if (!o.enforced) {
        d.warnings.push_back("policy " + o.policy + (o.error ? " error (ignored): " : " would not admit: ") + o.reason);
        continue;
      }
      d.outcome = Outcome::kRejected;
      d.denied_by = {o.error ? kRulePolicyError : o.policy};
      d.reason = o.error ? "not admitted: policy error: " + o.reason : "not admitted by " + o.policy + ": " + o.reason;
      return d;
    }
  }
  const int64_t requested_milli = RequestedGpuMilli(w.resources);
  if (tenant != nullptr && tenant->max_gpus && requested_milli > 0 &&
      usage.gpu_milli_in_use + requested_milli > int64_t{*tenant->max_gpus} * 1000) {
    d.outcome = Outcome::kQueued;
    d.reason = "tenant quota: " + FormatGpus(usage.gpu_milli_in_use) + " of " + std::to_string(*tenant->max_gpus) +
               " GPUs in use, needs " + FormatGpus(requested_milli);
    return d;
  }

  // Filter every cluster; score the ones that can run it now.
  std::vector<bool> applies(rules_.size());
  for (size_t r = 0; r < rules_.size(); ++r) {
    applies[r] = AllConditions(rules_[r].rule->when, wv, false) && AllConditions(rules_[r].rule->when, wv, true);
  }
  std::vector<std::optional<Candidate>> candidates(clusters_.size());
  bool any_eligible = false, budget_blocked = false;
  for (size_t c = 0; c < clusters_.size(); ++c) {
    const model::Cluster& cluster = *clusters_[c].cluster;
    ClusterVerdict v;
    v.cluster = cluster.metadata.name;
    std::vector<bool> pools(cluster.node_pools.size(), true);
    std::vector<std::pair<std::string, std::string>> pool_denials(pools.size());
    bool passes = PassesPolicies(w, wv, applies, c, v, pools, pool_denials);
    if (passes) {
      std::string mismatch = "no node pool";
      bool shape_ok = false;
      for (size_t p = 0; p < pools.size(); ++p) {
        if (!pools[p]) continue;
        std::string m = PoolShapeMismatch(cluster.node_pools[p], w.resources);
        if (m.empty()) {
          shape_ok = true;
        } else if (mismatch == "no node pool") {
          mismatch = m;
        }
        pools[p] = pools[p] && m.empty();
      }
      if (!shape_ok) {
        v.rule = kRuleHardware;
        v.reason = mismatch;
        // A pool a rule excluded would have fitted: that rule is the real reason.
        for (size_t p = 0; p < pools.size(); ++p) {
          if (!pool_denials[p].first.empty() && PoolShapeMismatch(cluster.node_pools[p], w.resources).empty()) {
            v.rule = pool_denials[p].first;
            v.reason = pool_denials[p].second;
            break;
          }
        }
        passes = false;
      }
    }
    if (passes) {
      // Cost caps use the cheapest pool that can take it.
      std::optional<CostEstimate> cheapest;
      for (size_t p = 0; p < pools.size(); ++p) {
        if (!pools[p]) continue;
        const model::NodePool& pool = cluster.node_pools[p];
        CostEstimate e = EstimateCost(cluster, pool, w, GpuMilli(w.resources, DemandOn(pool, w.resources)));
        if (!cheapest || e.total < cheapest->total) cheapest = e;
      }
      v.cost = cheapest->total;
      if (w.max_cost && (!cheapest->total.SameCurrency(*w.max_cost) || cheapest->total > *w.max_cost)) {
        v.rule = kRuleMaxCost;
        v.reason = cheapest->total.SameCurrency(*w.max_cost)
                       ? "projected cost " + cheapest->total.ToString() + " exceeds maxCost " + w.max_cost->ToString()
                       : "cluster prices in " + cheapest->total.currency() + ", maxCost is in " + w.max_cost->currency();
        passes = false;
      }
    }
    if (passes) {
      any_eligible = true;
      v.eligible = true;
      const model::Budget* budget = tenant ? &tenant->budget : nullptr;
      std::string over;
      if (budget && budget->limit && usage.spent.Plus(v.cost) > *budget->limit) {
        over = "projected cost " + v.cost.ToString() + " exceeds the budget left (" +
               budget->limit->Minus(usage.spent).ToString() + " of " + budget->limit->ToString() + ")";
      } else if (budget && budget->cloud_limit && !cluster.is_onprem() &&
                 usage.cloud_spent.Plus(v.cost) > *budget->cloud_limit) {
        over = "projected cost " + v.cost.ToString() + " exceeds the cloud budget left (" +
               budget->cloud_limit->Minus(usage.cloud_spent).ToString() + " of " + budget->cloud_limit->ToString() + ")";
      }
      if (!over.empty()) {
        v.rule = kRuleBudget;
        v.reason = over;
        v.eligible = false;
        budget_blocked = true;
      } else {
        candidates[c] = FindCandidate(w, c, pools);
        v.fits_now = candidates[c].has_value();
        if (!v.fits_now) {
          v.rule = kRuleCapacity;
          v.reason = "no free capacity for " + std::to_string(w.resources.total_gpus()) + " GPU(s) right now";
        } else {
          candidates[c]->cost = EstimateCost(cluster, *candidates[c]->pool, w,
                                             GpuMilli(w.resources, DemandOn(*candidates[c]->pool, w.resources)));
        }
      }
    }
    d.verdicts.push_back(std::move(v));
  }

  if (!any_eligible) {
    d.outcome = Outcome::kRejected;
    std::set<std::string> seen;
    for (const ClusterVerdict& v : d.verdicts) {
      if (seen.insert(v.rule).second) d.denied_by.push_back(v.rule);
    }
    std::vector<std::string> parts;
    for (const ClusterVerdict& v : d.verdicts) parts.push_back(v.cluster + ": " + v.rule);
    d.reason = "no cluster allowed: " + Join(parts, "; ");
    if (d.verdicts.empty()) d.reason = "no clusters declared";
    return d;
  }

  // Score: cost relative to the cheapest candidate, data locality, packing, on-prem,
  // and the policies' Lua score hooks.
  std::optional<Money> min_cost;
  for (const auto& cand : candidates) {
    if (cand && (!min_cost || cand->cost.total < *min_cost)) min_cost = cand->cost.total;
  }
  for (size_t c = 0; c < clusters_.size(); ++c) {
    if (!candidates[c]) continue;
    ClusterVerdict& v = d.verdicts[c];
    const Candidate& cand = *candidates[c];
    ScoreBreakdown& s = v.score;
    double cost = static_cast<double>(cand.cost.total.micros());
    s.cost = cost <= 0 ? 1.0 : static_cast<double>(std::max<int64_t>(min_cost->micros(), 0)) / cost;
    s.locality = w.data.dataset.empty() || clusters_[c].cluster->holds_dataset(w.data.dataset) ? 1.0 : 0.0;
    s.fragmentation = cand.nodes.front().second.Quality();
    s.onprem = clusters_[c].cluster->is_onprem() ? 1.0 : 0.0;
    if (snapshot_.hooks != nullptr) {
      std::vector<std::string> errors;
      s.lua = snapshot_.hooks->Score(wv, clusters_[c].view, snapshot_.now.seconds(), errors);
      for (const std::string& e : errors) v.warnings.push_back("score hook error (ignored): " + e);
    }
    s.total = weights_.cost * s.cost + weights_.locality * s.locality + weights_.fragmentation * s.fragmentation +
              weights_.onprem * s.onprem + s.lua;  // hooks apply each policy's own lua weight
  }
  auto best_in = [&](bool onprem) -> std::optional<size_t> {
    std::optional<size_t> best;
    for (size_t c = 0; c < clusters_.size(); ++c) {
      if (!candidates[c] || clusters_[c].cluster->is_onprem() != onprem) continue;
      if (!best || d.verdicts[c].score.total > d.verdicts[*best].score.total) best = c;
    }
    return best;
  };
  bool onprem_eligible = false, cloud_eligible = false;
  for (size_t c = 0; c < clusters_.size(); ++c) {
    if (!d.verdicts[c].eligible) continue;
    (clusters_[c].cluster->is_onprem() ? onprem_eligible : cloud_eligible) = true;
  }

  std::optional<size_t> chosen = best_in(true);
  std::string burst_note;
  if (!chosen && cloud_eligible) {
    std::string block = onprem_eligible ? BurstBlock(w) : "";
    if (block.empty()) {
      chosen = best_in(false);
      if (chosen && onprem_eligible) burst_note = "burst to cloud: on-prem is full";
    } else {
      for (size_t c = 0; c < clusters_.size(); ++c) {
        if (candidates[c] && !clusters_[c].cluster->is_onprem()) {
          d.verdicts[c].rule = kRuleBurst;
          d.verdicts[c].reason = block;
        }
      }
    }
  }
  if (!chosen) {
    d.outcome = Outcome::kQueued;
    std::vector<std::string> parts;
    bool only_budget = true;
    for (const ClusterVerdict& v : d.verdicts) {
      if (v.eligible || v.rule == kRuleBudget) parts.push_back(v.cluster + ": " + v.reason);
      only_budget = only_budget && (v.eligible ? false : true);
    }
    d.reason = "waiting: " + Join(parts, "; ");
    if (budget_blocked && only_budget) d.reason = "tenant budget exhausted: " + Join(parts, "; ");
    if (onprem_eligible) ++onprem_queue_depth_;
    return d;
  }
  Bind(w, *candidates[*chosen], d);
  d.warnings.insert(d.warnings.end(), d.verdicts[*chosen].warnings.begin(), d.verdicts[*chosen].warnings.end());
  if (!burst_note.empty()) d.reason = burst_note + "; " + d.reason;
  return d;
}

void Placer::Bind(const model::Workload& w, const Candidate& candidate, Decision& d) {
  ClusterEntry& entry = clusters_[candidate.cluster];
  const model::Cluster& cluster = *entry.cluster;
  std::vector<bool> allowed(cluster.node_pools.size(), false);
  allowed[candidate.pool - cluster.node_pools.data()] = true;
  for (const auto& [node_index, fit] : candidate.nodes) {
    int index = node_index;
    if (index >= static_cast<int>(entry.state.nodes.size())) {
      index = *ProvisionNode(entry.state, w.resources, allowed);
    }
    Reserve(entry.state, index, fit, w.resources);
    d.binding.nodes.push_back(entry.state.nodes[index].name);
    d.binding.gpus.push_back(fit.gpus);
    d.binding.gpu_milli_each = fit.milli_each;
    d.binding.mig_profile = fit.mig_profile;
  }
  d.outcome = Outcome::kPlaced;
  d.binding.cluster = cluster.metadata.name;
  d.binding.provisions_node = candidate.provision;
  int64_t ready_ms = candidate.provision ? cluster.elasticity.provision_delay.millis() : 0;
  ready_ms += static_cast<int64_t>(candidate.cost.transfer_seconds * 1000);
  d.binding.ready_after = Duration::FromMillis(ready_ms);
  d.cost = candidate.cost.total;

  TenantUsage& usage = usage_[w.tenant];
  usage.gpu_milli_in_use += RequestedGpuMilli(w.resources);
  usage.spent = usage.spent.Plus(d.cost);
  if (!cluster.is_onprem()) usage.cloud_spent = usage.cloud_spent.Plus(d.cost);

  const ScoreBreakdown& s = d.verdicts[candidate.cluster].score;
  char score[32];
  std::snprintf(score, sizeof score, "%.2f", s.total);
  d.reason = "best score " + std::string(score);
  if (candidate.provision) d.reason += "; adds a node (ready in " + cluster.elasticity.provision_delay.ToString() + ")";
  if (candidate.cost.egress.micros() > 0) d.reason += "; moves dataset " + w.data.dataset;
}

}  // namespace gpufed::placement
