#include "policies/engine/expectations.h"

#include <algorithm>
#include <set>

#include "controller/common/text.h"

namespace gpufed::policy {
namespace {

// The categories `expect.queued.rule` may name, besides a rule or policy.
constexpr std::string_view kQueueCauses[] = {"burst", "quota", "budget", "capacity"};

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Every rule that decided about some cluster of the decision (listed or grouped).
std::set<std::string> VerdictRules(const placement::Decision& d) {
  std::set<std::string> rules;
  for (const placement::ClusterVerdict& v : d.verdicts) {
    if (!v.rule.empty()) rules.insert(v.rule);
  }
  for (const placement::VerdictGroup& g : d.verdict_groups) {
    if (!g.rule.empty()) rules.insert(g.rule);
  }
  return rules;
}

// `name` is a rule that held some cluster back, or a policy one of whose rules (or
// Lua hooks, which speak as the policy) did.
bool HeldBackBy(const placement::Decision& d, const std::string& name, const model::Config& config) {
  const std::set<std::string> rules = VerdictRules(d);
  if (rules.count(name)) return true;
  for (const model::Policy& p : config.policies) {
    if (p.metadata.name != name) continue;
    for (const model::Rule& r : p.rules) {
      if (rules.count(r.name)) return true;
    }
  }
  return false;
}

bool ExplanationMentions(const placement::Decision& d, const std::string& text) {
  if (Contains(d.reason, text)) return true;
  for (const std::string& w : d.warnings) {
    if (Contains(w, text)) return true;
  }
  for (const placement::ClusterVerdict& v : d.verdicts) {
    if (Contains(v.reason, text) || Contains(v.rule, text)) return true;
    for (const std::string& w : v.warnings) {
      if (Contains(w, text)) return true;
    }
  }
  for (const placement::VerdictGroup& g : d.verdict_groups) {
    if (Contains(g.reason, text) || Contains(g.rule, text)) return true;
  }
  return false;
}

bool SelectorMatches(const model::Cluster& c, const std::map<std::string, std::string>& selector) {
  for (const auto& [key, value] : selector) {
    const std::string& actual = key == "provider" ? c.provider : key == "zone" ? c.zone : c.region;
    if (actual != value) return false;
  }
  return true;
}

bool PlacementMeets(const model::Expectation& e, const placement::Decision& d, const model::Config& config) {
  const placement::Binding& b = d.binding;
  const model::Cluster* cluster = config.FindCluster(b.cluster);
  if (cluster == nullptr || !SelectorMatches(*cluster, e.selector)) return false;
  if (!e.cluster.empty() && e.cluster != b.cluster) return false;
  if (!e.pool.empty() && e.pool != b.pool) return false;
  if (!e.node.empty() && std::find(b.nodes.begin(), b.nodes.end(), e.node) == b.nodes.end()) return false;
  if (!e.mig_profile.empty() && e.mig_profile != b.mig_profile) return false;
  if (e.nodes && *e.nodes != static_cast<int>(b.nodes.size())) return false;
  if (e.gpus_per_node) {
    for (const std::vector<int>& gpus : b.gpus) {
      if (static_cast<int>(gpus.size()) != *e.gpus_per_node) return false;
    }
  }
  if (e.max_cost) {
    // In the expectation's currency, through the repository's rates; without one it fails.
    const Result<Money> cost = config.Converter().Convert(d.cost, e.max_cost->currency());
    const Result<std::strong_ordering> order = cost.ok() ? cost->Compare(*e.max_cost) : cost.status();
    if (!order.ok() || *order > 0) return false;
  }
  if (e.preempts) {
    std::vector<std::string> victims, wanted = *e.preempts;
    for (const placement::Preemption& p : d.preempted) victims.push_back(p.workload);
    std::sort(victims.begin(), victims.end());
    std::sort(wanted.begin(), wanted.end());
    if (victims != wanted) return false;
  }
  return true;
}

}  // namespace

std::string DescribeExpectation(const model::PolicyTestCase& c) {
  const model::Expectation& e = c.expect;
  std::string text;
  switch (e.outcome) {
    case model::ExpectedOutcome::kPlaced: {
      std::vector<std::string> parts;
      if (!e.cluster.empty()) parts.push_back("cluster=" + e.cluster);
      for (const auto& [k, v] : e.selector) {
        std::string part = k;
        part += '=';
        part += v;
        parts.push_back(std::move(part));
      }
      if (!e.pool.empty()) parts.push_back("pool=" + e.pool);
      if (!e.node.empty()) parts.push_back("node=" + e.node);
      if (!e.mig_profile.empty()) parts.push_back("migProfile=" + e.mig_profile);
      if (e.nodes) parts.push_back("nodes=" + std::to_string(*e.nodes));
      if (e.gpus_per_node) parts.push_back("gpusPerNode=" + std::to_string(*e.gpus_per_node));
      if (e.max_cost) parts.push_back("cost<=" + e.max_cost->ToString());
      text = parts.empty() ? "placed" : "placed on " + Join(parts, ",");
      if (e.preempts) text += e.preempts->empty() ? ", preempting nothing" : ", preempting " + Join(*e.preempts, ", ");
      break;
    }
    case model::ExpectedOutcome::kQueued:
      text = "queued" + (e.rule.empty() ? std::string() : " by " + e.rule) +
             (e.reason.empty() ? std::string() : " (reason contains \"" + e.reason + "\")");
      break;
    case model::ExpectedOutcome::kRejected:
      text = "rejected" + (e.rule.empty() ? std::string() : " by rule " + e.rule) +
             (e.reason.empty() ? std::string() : " (reason contains \"" + e.reason + "\")");
      break;
  }
  if (!c.reasons.empty()) text += "; explanation mentions \"" + Join(c.reasons, "\", \"") + "\"";
  return text;
}

std::string DescribeDecision(const placement::Decision& d, const model::Config& config) {
  switch (d.outcome) {
    case placement::Outcome::kPlaced: {
      const placement::Binding& b = d.binding;
      const model::Cluster* c = config.FindCluster(b.cluster);
      std::string text = "placed on cluster=" + b.cluster + (c ? ",provider=" + c->provider + ",zone=" + c->zone : "") +
                         ",pool=" + b.pool + ",node=" + Join(b.nodes, "+") + ",nodes=" + std::to_string(b.nodes.size());
      if (!b.gpus.empty()) text += ",gpusPerNode=" + std::to_string(b.gpus.front().size());
      if (!b.mig_profile.empty()) text += ",migProfile=" + b.mig_profile;
      text += ",cost=" + d.cost.ToString();
      std::vector<std::string> victims;
      victims.reserve(d.preempted.size());
      for (const placement::Preemption& p : d.preempted) victims.push_back(p.workload);
      if (!victims.empty()) text += ", preempting " + Join(victims, ", ");
      return text;
    }
    case placement::Outcome::kQueued: return "queued by " + QueuedBy(d) + ": " + d.reason;
    case placement::Outcome::kRejected: return "rejected by " + Join(d.denied_by, ", ") + ": " + d.reason;
  }
  return "";
}

std::string QueuedBy(const placement::Decision& d) {
  if (d.outcome != placement::Outcome::kQueued) return "";
  // The placer's quota and budget decisions say so first (placer.cc).
  if (d.reason.rfind("tenant quota", 0) == 0) return "quota";
  if (d.reason.rfind("tenant budget exhausted", 0) == 0) return "budget";
  return VerdictRules(d).count("burst") ? "burst" : "capacity";
}

bool Meets(const model::PolicyTestCase& c, const placement::Decision& d, const model::Config& config) {
  const model::Expectation& e = c.expect;
  bool ok = false;
  switch (e.outcome) {
    case model::ExpectedOutcome::kPlaced:
      ok = d.outcome == placement::Outcome::kPlaced && PlacementMeets(e, d, config);
      break;
    case model::ExpectedOutcome::kQueued: {
      ok = d.outcome == placement::Outcome::kQueued && Contains(d.reason, e.reason);
      const bool cause = std::find(std::begin(kQueueCauses), std::end(kQueueCauses), e.rule) != std::end(kQueueCauses);
      if (cause) ok = ok && QueuedBy(d) == e.rule;
      if (!cause && !e.rule.empty()) ok = ok && HeldBackBy(d, e.rule, config);
      break;
    }
    case model::ExpectedOutcome::kRejected:
      ok = d.outcome == placement::Outcome::kRejected && Contains(d.reason, e.reason) &&
           (e.rule.empty() || std::find(d.denied_by.begin(), d.denied_by.end(), e.rule) != d.denied_by.end());
      break;
  }
  for (const std::string& r : c.reasons) ok = ok && ExplanationMentions(d, r);
  return ok;
}

std::vector<std::string> ExplainDecision(const placement::Decision& d) {
  std::vector<std::string> lines;
  for (const placement::ClusterVerdict& v : d.verdicts) {
    if (!v.rule.empty()) {
      lines.push_back(v.cluster + ": " + v.rule + ": " + v.reason);
    } else {
      char score[64];
      std::snprintf(score, sizeof score, "%.2f", v.score.total);
      lines.push_back(v.cluster + ": eligible, score " + score + ", cost " + v.cost.ToString());
    }
    for (const std::string& w : v.warnings) lines.push_back(v.cluster + ": " + w);
  }
  for (const placement::VerdictGroup& g : d.verdict_groups) {
    lines.push_back(std::to_string(g.clusters) + " more cluster(s) (" + Join(g.examples, ", ") +
                    (g.clusters > static_cast<int>(g.examples.size()) ? ", ..." : "") +
                    "): " + (g.rule.empty() ? "" : g.rule + ": ") + g.reason);
  }
  for (const placement::Preemption& p : d.preempted) lines.push_back("preempts " + p.workload + ": " + p.reason);
  return lines;
}

}  // namespace gpufed::policy
