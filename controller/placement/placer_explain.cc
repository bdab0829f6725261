// Explanations: each cluster's verdict for a decision, and the reasons a decision
// quotes. Small federations list every cluster; large ones list the chosen cluster and
// the best alternatives and group the rest by rule, so a decision's size and cost do
// not grow with the fleet.
#include <algorithm>
#include <array>
#include <cassert>
#include <limits>
#include <map>
#include <set>

#include "controller/common/text.h"
#include "controller/placement/placer.h"
#include "controller/placement/placer_rules.h"

namespace gpufed::placement {
namespace {

constexpr size_t kListedCandidates = 5;  // runners-up listed on large federations
constexpr size_t kListedFull = 5;        // eligible clusters without room listed there
constexpr size_t kGroupExamples = 3;

// Evaluation::Hold() -> rule name.
constexpr const char* kHoldRules[] = {"", kRuleMaxCost, kRuleBudget, kRuleCapacity, kRuleBurst};
constexpr int kHolds = kEvaluationHoldKinds;
static_assert(std::size(kHoldRules) == kHolds);

std::string CapacityReason(const model::Workload& w) {
  return "no free capacity for " + std::to_string(w.resources.total_gpus()) + " GPU(s) right now";
}

}  // namespace

std::string_view Placer::RuleOf(const ShapeClass& shape, size_t c) const {
  const PolicyVerdict& p = shape.policy->clusters[c];
  if (!p.passed) return p.rule;
  const ShapeCluster& sc = shape.clusters[c];
  if (!sc.eligible) return sc.rule;
  return kHoldRules[evaluations_[c].Hold()];
}

ClusterVerdict Placer::VerdictOf(const model::Workload& w, const ShapeClass& shape, size_t c, const Evaluation& e,
                                 const std::string& burst_block) const {
  const model::Cluster& cluster = *clusters_[c].cluster;
  const PolicyVerdict& p = shape.policy->clusters[c];
  const ShapeCluster& sc = shape.clusters[c];
  ClusterVerdict v;
  v.cluster = cluster.metadata.name;
  v.warnings = p.warnings;
  if (!p.passed || !sc.eligible) {
    v.rule = p.passed ? sc.rule : p.rule;
    v.reason = p.passed ? sc.reason : p.reason;
    return v;
  }
  // Priced on the pool where it fits now, else the cheapest (the pool caps rule it out on).
  int pool = sc.cheapest_pool;
  if (e.fits && !e.preempts && shape.fits->fits[c].fits && shape.fits->fits[c].pool >= 0) {
    pool = shape.fits->fits[c].pool;
  }
  v.cost =
      EstimateCostAt(cluster, sc.prices[static_cast<size_t>(pool)], w, sc.gpu_milli[static_cast<size_t>(pool)]).total;
  switch (e.stage) {
    case Evaluation::Stage::kMaxCost:
      v.rule = kRuleMaxCost;
      v.reason = OverMaxCost(w, v.cost);
      return v;
    case Evaluation::Stage::kBudget: {
      bool never = false;
      v.rule = kRuleBudget;
      v.reason = OverBudget(cluster, tenants_.at(w.tenant), v.cost, never);
      return v;
    }
    case Evaluation::Stage::kEligible: break;
  }
  v.eligible = true;
  v.fits_now = e.fits;
  if (e.evaluated && !e.fits) {
    const std::string& down = clusters_[c].down_reason;
    v.rule = down.empty() ? kRuleCapacity : kRuleUnhealthy;
    v.reason = down.empty() ? CapacityReason(w) : down;
  } else if (e.burst_blocked) {
    v.rule = kRuleBurst;
    v.reason = burst_block;
  }
  if (e.fits) {
    v.score = ScoreOf(w, *shape.policy, candidates_[static_cast<size_t>(e.candidate)]);
    for (const std::string& error : p.score_errors) v.warnings.push_back("score hook error (ignored): " + error);
  }
  return v;
}

void Placer::Explain(const model::Workload& w, const ShapeClass& shape, const std::string& burst_block,
                     std::optional<size_t> chosen, Decision& d) const {
  static const Evaluation kNotEvaluated;
  auto evaluation = [&](size_t c) -> const Evaluation& {
    return shape.clusters[c].eligible ? evaluations_[c] : kNotEvaluated;
  };
  if (ExplainsEveryCluster()) {
    d.verdicts.reserve(clusters_.size());
    for (size_t c = 0; c < clusters_.size(); ++c)
      d.verdicts.push_back(VerdictOf(w, shape, c, evaluation(c), burst_block));
    return;
  }
  // Listed: the chosen cluster, the best other candidates, and the first eligible
  // clusters without room (what preemption and operators look at next).
  // The best other candidates, best first (a strict order: score, then cluster), kept in
  // one pass over them (hundreds) rather than sorted.
  auto better = [&](uint32_t a, uint32_t b) {
    const double sa = candidates_[a].total, sb = candidates_[b].total;
    return sa != sb ? sa > sb : candidates_[a].cluster < candidates_[b].cluster;
  };
  std::array<uint32_t, kListedCandidates> best;
  size_t top = 0;
  // Once five are kept, most candidates score below the fifth: that total is kept at
  // hand, and only a candidate reaching it is compared in full.
  double fifth = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < candidates_.size(); ++i) {
    const auto k = static_cast<uint32_t>(i);
    if (top == best.size() && candidates_[i].total < fifth) continue;
    if (candidates_[i].cluster == chosen || (top == best.size() && !better(k, best[top - 1]))) continue;
    size_t at = std::min(top, best.size() - 1);
    for (; at > 0 && better(k, best[at - 1]); --at) best[at] = best[at - 1];
    best[at] = k;
    top = std::min(top + 1, best.size());
    if (top == best.size()) fifth = candidates_[best[top - 1]].total;
  }
  std::vector<uint32_t> listed;  // cluster indices
  listed.reserve(kListedFull + 1 + top);
  for (uint32_t c : shape.eligible) {
    if (listed.size() == kListedFull) break;
    if (evaluations_[c].Hold() == 3) listed.push_back(c);
  }
  if (chosen) listed.push_back(static_cast<uint32_t>(*chosen));
  for (size_t i = 0; i < top; ++i) listed.push_back(candidates_[best[i]].cluster);
  std::sort(listed.begin(), listed.end());  // verdicts stay in cluster name order
  d.verdicts.reserve(listed.size());
  for (uint32_t c : listed) d.verdicts.push_back(VerdictOf(w, shape, c, evaluation(c), burst_block));
  d.verdict_groups = GroupVerdicts(w, shape, burst_block, [](std::string_view, bool) { return true; }, &listed);
}

std::vector<VerdictGroup> Placer::GroupVerdicts(const model::Workload& w, const ShapeClass& shape,
                                                const std::string& burst_block,
                                                const std::function<bool(std::string_view, bool)>& include,
                                                const std::vector<uint32_t>* listed) const {
  if (!shape.fixed_groups_built) {
    // Clusters the policies or the hardware rule out: the same for every workload of
    // the shape class, so grouped once.
    std::map<std::string_view, size_t> index;
    for (size_t c = 0; c < clusters_.size(); ++c) {
      if (shape.clusters[c].eligible) continue;
      const std::string_view rule = RuleOf(shape, c);
      auto [it, added] = index.emplace(rule, shape.fixed_groups.size());
      if (added) {
        VerdictGroup group;
        group.rule = std::string(rule);
        group.reason = VerdictOf(w, shape, c, Evaluation(), burst_block).reason;
        shape.fixed_groups.push_back(std::move(group));
      }
      VerdictGroup& group = shape.fixed_groups[it->second];
      ++group.clusters;
      if (group.examples.size() < kGroupExamples) group.examples.push_back(clusters_[c].cluster->metadata.name);
    }
    shape.fixed_groups_built = true;
  }
  std::vector<VerdictGroup> groups;
  groups.reserve(shape.fixed_groups.size() + kHolds);
  for (const VerdictGroup& g : shape.fixed_groups) {
    if (include(g.rule, false)) groups.push_back(g);
  }
  // Eligible clusters, by what holds them back. This runs in every decision: the counts
  // are the ones Decide kept, and the clusters are walked in order only until each group
  // has its first cluster (which gives the reason) and examples.
  bool wanted[kHolds];
  int slot[kHolds];
  std::array<int64_t, kHolds> count = hold_counts_;
#ifndef NDEBUG
  std::array<int64_t, kHolds> recount{};
  for (uint32_t c : shape.eligible) ++recount[evaluations_[c].Hold()];
  assert(recount == count);
#endif
  for (int h = 0; h < kHolds; ++h) {
    wanted[h] = include(kHoldRules[h], /*eligible=*/h != 1 && h != 2);
    slot[h] = -1;
  }
  if (listed != nullptr) {
    for (uint32_t c : *listed) {
      if (shape.clusters[c].eligible) --count[evaluations_[c].Hold()];
    }
  }
  int unfinished = 0;  // groups still short of their first cluster or examples
  for (int h = 0; h < kHolds; ++h) unfinished += wanted[h] && count[h] > 0 ? 1 : 0;
  auto next_listed = listed != nullptr ? listed->begin() : std::vector<uint32_t>::const_iterator();
  for (size_t i = 0; unfinished > 0 && i < shape.eligible.size(); ++i) {
    const uint32_t c = shape.eligible[i];
    if (listed != nullptr) {  // both ascending: walk them together
      while (next_listed != listed->end() && *next_listed < c) ++next_listed;
      if (next_listed != listed->end() && *next_listed == c) continue;
    }
    const int h = evaluations_[c].Hold();
    if (!wanted[h]) continue;
    if (slot[h] < 0) {
      VerdictGroup group;
      group.rule = kHoldRules[h];
      group.reason = h == 0 ? "eligible; scored lower" : VerdictOf(w, shape, c, evaluations_[c], burst_block).reason;
      if (h == 3 && !clusters_[c].down_reason.empty()) {
        // The group is every cluster without room; its first is down, not necessarily the rest.
        group.reason = CapacityReason(w) + " (" + clusters_[c].cluster->metadata.name + ": " + group.reason + ")";
      }
      group.clusters = static_cast<int>(count[h]);
      slot[h] = static_cast<int>(groups.size());
      groups.push_back(std::move(group));
    }
    VerdictGroup& group = groups[static_cast<size_t>(slot[h])];
    if (group.examples.size() >= kGroupExamples) continue;
    group.examples.push_back(clusters_[c].cluster->metadata.name);
    if (group.examples.size() == std::min<size_t>(kGroupExamples, static_cast<size_t>(count[h]))) --unfinished;
  }
  return groups;
}

void Placer::Reject(const model::Workload& w, const ShapeClass& shape, Decision& d) const {
  d.outcome = Outcome::kRejected;
  auto all = [](std::string_view, bool) { return true; };
  std::set<std::string_view> seen;
  if (ExplainsEveryCluster()) {
    for (size_t c = 0; c < clusters_.size(); ++c) {
      const std::string_view rule = RuleOf(shape, c);
      if (seen.insert(rule).second) d.denied_by.emplace_back(rule);
    }
  } else {
    for (const VerdictGroup& g : GroupVerdicts(w, shape, "", all, nullptr)) {
      if (seen.insert(g.rule).second) d.denied_by.push_back(g.rule);
    }
  }
  d.reason = clusters_.empty() ? "no clusters declared" : "no cluster allowed: " + ListReasons(w, shape, "", all, true);
  Explain(w, shape, "", std::nullopt, d);
}

std::string Placer::ListReasons(const model::Workload& w, const ShapeClass& shape, const std::string& burst_block,
                                const std::function<bool(std::string_view, bool)>& include, bool rules_only) const {
  static const Evaluation kNotEvaluated;
  auto eligible = [&](size_t c) {
    return shape.clusters[c].eligible && evaluations_[c].stage == Evaluation::Stage::kEligible;
  };
  auto verdict = [&](size_t c) {
    return VerdictOf(w, shape, c, shape.clusters[c].eligible ? evaluations_[c] : kNotEvaluated, burst_block);
  };
  std::vector<std::string> parts;
  if (ExplainsEveryCluster()) {
    for (size_t c = 0; c < clusters_.size(); ++c) {
      if (!include(RuleOf(shape, c), eligible(c))) continue;
      ClusterVerdict v = verdict(c);
      parts.push_back(v.cluster + ": " + (rules_only ? v.rule : v.reason));
    }
    return Join(parts, "; ");
  }
  for (const VerdictGroup& g : GroupVerdicts(w, shape, burst_block, include, nullptr)) {
    std::string text = g.rule.empty() ? "eligible" : g.rule;
    if (!rules_only && !g.rule.empty()) text += ": " + g.reason;
    text += " (" + std::to_string(g.clusters) + (g.clusters == 1 ? " cluster: " : " clusters: ") +
            Join(g.examples, ", ") + (g.clusters > static_cast<int>(g.examples.size()) ? ", ...)" : ")");
    parts.push_back(std::move(text));
  }
  return Join(parts, "; ");
}

}  // namespace gpufed::placement
