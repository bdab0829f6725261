// The placer's per-cluster checks: policy filters, hardware shape, cost caps, budgets,
// the burst gate, capacity search and scoring. See placer.cc for the decision flow.
#include <algorithm>
#include <cstdio>

#include "controller/common/text.h"
#include "controller/placement/matcher.h"
#include "controller/placement/placer.h"
#include "controller/placement/placer_rules.h"
#include "controller/placement/search.h"

namespace gpufed::placement {
namespace {

const model::Condition* FirstFailing(const std::vector<model::Condition>& conditions, const nlohmann::json& view) {
  for (const model::Condition& c : conditions) {
    if (!c.on_node && !ConditionHolds(c, view)) return &c;
  }
  return nullptr;
}

// Applies a filter hook's pool denials to a cluster it allowed. False when no pool the
// policies allowed is left (the verdict then says why); warn and dryrun policies only
// report. A pool the cluster does not declare is reported, not ignored.
bool ApplyPoolDenials(const HookOutcome& o, const model::Cluster& cluster, ClusterVerdict& verdict,
                      std::vector<bool>& pool_allowed, std::vector<std::pair<std::string, std::string>>& pool_denials) {
  std::vector<std::string> denied;
  for (const auto& [name, why] : o.denied_pools) {
    auto it = std::find_if(cluster.node_pools.begin(), cluster.node_pools.end(),
                           [&](const model::NodePool& p) { return p.name == name; });
    if (it == cluster.node_pools.end()) {
      std::string warning = "policy " + o.policy;
      warning += " denied pool " + name;
      warning += ", which cluster " + cluster.metadata.name + " does not declare";
      verdict.warnings.push_back(std::move(warning));
      continue;
    }
    const auto p = static_cast<size_t>(it - cluster.node_pools.begin());
    if (!pool_allowed[p]) continue;
    std::string denial = "pool " + name;
    denial += ": " + why;
    if (!o.enforced) {
      verdict.warnings.push_back("policy " + o.policy + " would deny " + denial);
      continue;
    }
    pool_allowed[p] = false;
    pool_denials[p] = {o.policy, std::move(denial)};
    denied.push_back(pool_denials[p].second);
  }
  if (std::find(pool_allowed.begin(), pool_allowed.end(), true) != pool_allowed.end()) return true;
  verdict.rule = o.policy;
  verdict.reason = Join(denied, "; ");
  return false;
}

}  // namespace

int64_t RequestedGpuMilli(const model::ResourceRequest& r) {
  if (r.gpu_share.milli() > 0) return r.gpu_share.milli();
  if (!r.mig_profile.empty()) {
    std::optional<model::MigProfileName> info = model::ParseMigProfile(r.mig_profile);
    return info ? info->compute_slices * kMilliPerGpu / kMigComputeSlices : kMilliPerGpu;
  }
  return int64_t{r.total_gpus()} * kMilliPerGpu;
}

std::string FormatGpus(int64_t milli) {
  char text[32];
  std::snprintf(text, sizeof text, milli % 1000 == 0 ? "%.0f" : "%.2f", milli / 1000.0);
  return text;
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
        rule_pools[p] = AllConditionsHold(rule.require, entry.pool_views[p], /*node_level=*/true);
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
      case model::Enforcement::kDryRun:
        verdict.warnings.push_back("dryrun " + rule.name + " would deny: " + because);
        break;
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
      if (o.allowed && !o.error) {
        if (o.denied_pools.empty()) continue;
        if (!ApplyPoolDenials(o, *entry.cluster, verdict, pool_allowed, pool_denials)) return false;
        continue;
      }
      if (!o.enforced) {
        verdict.warnings.push_back("policy " + o.policy + (o.error ? " error (ignored): " : " would deny: ") +
                                   o.reason);
        continue;
      }
      verdict.rule = o.error ? kRulePolicyError : o.policy;
      verdict.reason = o.error ? "policy error: " + o.reason : o.reason;
      return false;
    }
  }
  return true;
}

std::optional<Money> Placer::InCurrency(const Money& cost, const std::string& currency) const {
  Result<Money> converted = converter_.Convert(cost, currency);
  if (!converted.ok()) return std::nullopt;
  return std::move(*converted);
}

std::string Placer::CostText(const Money& cost, const Money& converted) const {
  if (cost.currency().empty() || converted.currency() == cost.currency()) return cost.ToString();
  std::string text = cost.ToString() + " (" + converted.ToString();
  if (std::optional<model::AppliedRate> r = converter_.RateFor(cost.currency(), converted.currency())) {
    text += " at " + r->rate + " " + r->to + " per " + r->from + ", rates of " + r->as_of;
  }
  return text + ")";
}

std::string Placer::OverMaxCost(const model::Workload& w, const Money& cost) const {
  if (!w.max_cost) return "";
  const std::optional<Money> in_cap = InCurrency(cost, w.max_cost->currency());
  if (!in_cap) {
    return "cluster prices in " + cost.currency() + ", maxCost is in " + w.max_cost->currency() +
           ", and no exchange rate converts " + cost.currency() + " to " + w.max_cost->currency();
  }
  const Result<bool> over = Exceeds(*in_cap, *w.max_cost);
  if (over.ok() && !*over) return "";
  return "projected cost " + CostText(cost, *in_cap) + " exceeds maxCost " + w.max_cost->ToString();
}

std::string Placer::OverBudget(const model::Cluster& cluster, const TenantState& t, const Money& cost,
                               bool& never) const {
  never = false;
  const model::Budget* budget = t.tenant ? &t.tenant->budget : nullptr;
  if (budget == nullptr || (!budget->limit && !budget->cloud_limit)) return "";
  // Spend is kept in the budget's currency (tenant_spend.h): the cost is converted into it.
  const std::optional<Money> in_budget = InCurrency(cost, budget->Currency());
  if (!in_budget) {
    return "cluster prices in " + cost.currency() + ", the budget of tenant " + t.tenant->metadata.name + " is in " +
           budget->Currency() + ", and no exchange rate converts " + cost.currency() + " to " + budget->Currency();
  }
  auto over = [&](const std::optional<Money>& limit, const Money& spent, const char* which) -> std::string {
    if (!limit) return "";
    const Result<Money> projected = spent.Plus(*in_budget);
    const Result<bool> exceeds = projected.ok() ? Exceeds(*projected, *limit) : Result<bool>(projected.status());
    if (!exceeds.ok()) return exceeds.status().message();  // fail closed
    if (!*exceeds) return "";
    const Result<bool> whole = Exceeds(*in_budget, *limit);
    never = whole.ok() && *whole;
    const Result<Money> left = limit->Minus(spent);
    return "projected cost " + CostText(cost, *in_budget) + " exceeds the " + which + "budget left (" +
           (left.ok() ? left->ToString() : left.status().message()) + " of " + limit->ToString() + ")";
  };
  std::string why = over(budget->limit, t.usage.spent, "");
  if (why.empty() && !cluster.is_onprem()) why = over(budget->cloud_limit, t.usage.cloud_spent, "cloud ");
  return why;
}

void Placer::RecordRates(const model::Workload& w, const TenantState& t, Decision& d) const {
  std::vector<std::string> targets;
  if (w.max_cost) targets.push_back(w.max_cost->currency());
  if (t.tenant != nullptr && (t.tenant->budget.limit || t.tenant->budget.cloud_limit)) {
    targets.push_back(t.tenant->budget.Currency());
  }
  if (targets.empty()) return;
  auto note = [&](const std::string& from) {
    for (const std::string& to : targets) {
      if (from.empty() || to.empty() || from == to) continue;
      std::optional<model::AppliedRate> rate = converter_.RateFor(from, to);
      if (rate && std::find(d.exchange_rates.begin(), d.exchange_rates.end(), *rate) == d.exchange_rates.end()) {
        d.exchange_rates.push_back(std::move(*rate));
      }
    }
  };
  note(d.cost.currency());
  for (const ClusterVerdict& v : d.verdicts) note(v.cost.currency());
  // A large federation's grouped clusters were priced too: every currency may have been.
  if (!d.verdict_groups.empty()) {
    for (const model::Cluster& c : config_.clusters) note(c.pricing.currency);
  }
}

void Placer::RaiseAlerts(const TenantState& before, const TenantState& after, Decision& d) const {
  if (after.tenant == nullptr) return;
  const model::Budget& budget = after.tenant->budget;
  auto check = [&](const std::optional<Money>& limit, const Money& was, const Money& now, bool cloud) {
    if (!limit || limit->micros() <= 0) return;
    for (double level : budget.alert_at) {
      const int64_t threshold = static_cast<int64_t>(static_cast<double>(limit->micros()) * level);
      if (was.micros() < threshold && now.micros() >= threshold) {
        BudgetAlert a;
        a.tenant = after.tenant->metadata.name;
        a.cloud = cloud;
        a.level = level;
        a.spent = now;
        a.limit = *limit;
        char pct[16];
        std::snprintf(pct, sizeof pct, "%g%%", level * 100);
        a.message = "tenant " + a.tenant + " reaches " + pct + " of its " + (cloud ? "cloud " : "") +
                    "budget: " + now.ToString() + " of " + limit->ToString() + " (" +
                    model::BudgetPeriodName(budget.period) + ")";
        d.alerts.push_back(std::move(a));
      }
    }
  };
  check(budget.limit, before.usage.spent, after.usage.spent, false);
  check(budget.cloud_limit, before.usage.cloud_spent, after.usage.cloud_spent, true);
}

std::optional<Placement> Placer::PlacementOn(const model::Workload& w, size_t c, const std::vector<bool>& pool_allowed,
                                             const PoolDemands* demands) const {
  const ClusterState& state = clusters_[c].state;
  // Skip the node scan when a whole-GPU request cannot fit and nothing can be added.
  if (state.elastic_nodes_left == 0 && !MayFitWholeGpus(state, w.resources)) return std::nullopt;
  return FindPlacement(state, w.resources, pool_allowed, -1, demands);
}

std::optional<Placer::Candidate> Placer::FindCandidate(const model::Workload& w, size_t c,
                                                       const std::vector<bool>& pool_allowed,
                                                       const PoolDemands* demands) {
  ClusterEntry& entry = clusters_[c];
  const model::ResourceRequest& r = w.resources;
  std::optional<Placement> found = PlacementOn(w, c, pool_allowed, demands);
  if (!found) return std::nullopt;
  Candidate candidate;
  candidate.cluster = c;
  candidate.nodes = std::move(found->nodes);
  candidate.provision = found->provisions;
  candidate.pool = &entry.cluster->node_pools[found->pool];
  candidate.cost = EstimateCost(*entry.cluster, *candidate.pool, w, GpuMilli(r, DemandOn(*candidate.pool, r)));
  return candidate;
}

std::string Placer::BurstBlock(const model::Workload& w) const {
  if (!burst_.queue_wait && !burst_.queue_depth) return "";
  // The workload's own wait in its class's queue. Measuring from the head of the class
  // instead released every pending workload of the class at once when the head crossed
  // the threshold; on the Philly replay that burst more GPU-hours than bursting at once
  // (always-cheapest) at low load, so each workload waits its own threshold.
  const Duration since = w.submitted_at;
  Duration waited = snapshot_.now > since ? Duration::FromMillis(snapshot_.now.millis() - since.millis()) : Duration();
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

}  // namespace gpufed::placement
