#include "policies/engine/test_runner.h"

#include <algorithm>

#include "controller/common/text.h"
#include "controller/model/views.h"
#include "controller/placement/matcher.h"

namespace gpufed::policy {
namespace {

std::string DescribeExpectation(const model::Expectation& e) {
  switch (e.outcome) {
    case model::ExpectedOutcome::kPlaced: {
      std::vector<std::string> parts;
      if (!e.cluster.empty()) parts.push_back("cluster=" + e.cluster);
      for (const auto& [k, v] : e.selector) parts.push_back(k + "=" + v);
      return parts.empty() ? "placed" : "placed on " + Join(parts, ",");
    }
    case model::ExpectedOutcome::kQueued: return e.reason.empty() ? "queued" : "queued (reason contains \"" + e.reason + "\")";
    case model::ExpectedOutcome::kRejected:
      return "rejected" + (e.rule.empty() ? std::string() : " by rule " + e.rule) +
             (e.reason.empty() ? std::string() : " (reason contains \"" + e.reason + "\")");
  }
  return "";
}

std::string DescribeDecision(const placement::Decision& d, const model::Config& config) {
  switch (d.outcome) {
    case placement::Outcome::kPlaced: {
      const model::Cluster* c = config.FindCluster(d.binding.cluster);
      return "placed on cluster=" + d.binding.cluster + (c ? ",provider=" + c->provider + ",zone=" + c->zone : "");
    }
    case placement::Outcome::kQueued: return "queued: " + d.reason;
    case placement::Outcome::kRejected: return "rejected by " + Join(d.denied_by, ", ") + ": " + d.reason;
  }
  return "";
}

bool SelectorMatches(const model::Cluster& c, const std::map<std::string, std::string>& selector) {
  for (const auto& [key, value] : selector) {
    const std::string& actual = key == "provider" ? c.provider : key == "zone" ? c.zone : c.region;
    if (actual != value) return false;
  }
  return true;
}

bool Contains(const std::string& haystack, const std::string& needle) { return haystack.find(needle) != std::string::npos; }

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

bool Meets(const model::PolicyTestCase& c, const placement::Decision& d, const model::Config& config) {
  const model::Expectation& e = c.expect;
  bool ok = false;
  switch (e.outcome) {
    case model::ExpectedOutcome::kPlaced: {
      if (d.outcome != placement::Outcome::kPlaced) return false;
      const model::Cluster* cluster = config.FindCluster(d.binding.cluster);
      ok = (e.cluster.empty() || e.cluster == d.binding.cluster) && cluster && SelectorMatches(*cluster, e.selector);
      break;
    }
    case model::ExpectedOutcome::kQueued:
      ok = d.outcome == placement::Outcome::kQueued && Contains(d.reason, e.reason);
      break;
    case model::ExpectedOutcome::kRejected:
      ok = d.outcome == placement::Outcome::kRejected && Contains(d.reason, e.reason) &&
           (e.rule.empty() || std::find(d.denied_by.begin(), d.denied_by.end(), e.rule) != d.denied_by.end());
      break;
  }
  for (const std::string& r : c.reasons) ok = ok && ExplanationMentions(d, r);
  return ok;
}

std::vector<std::string> Explain(const placement::Decision& d) {
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
  return lines;
}

// The config a case sees: the named clusters and tenants (all when none are named).
model::Config CaseConfig(const model::Config& repo, const model::PolicyTestCase& c) {
  model::Config config;
  config.revision = repo.revision;
  config.root = repo.root;
  config.policies = repo.policies;
  config.lua_sources = repo.lua_sources;
  for (const model::Cluster& cluster : repo.clusters) {
    if (c.clusters.empty() || std::count(c.clusters.begin(), c.clusters.end(), cluster.metadata.name)) {
      config.clusters.push_back(cluster);
    }
  }
  for (const model::Tenant& tenant : repo.tenants) {
    if (c.tenants.empty() || std::count(c.tenants.begin(), c.tenants.end(), tenant.metadata.name) ||
        tenant.metadata.name == c.workload.tenant) {
      config.tenants.push_back(tenant);
    }
  }
  return config;
}

}  // namespace

TestReport RunPolicyTests(const model::Config& repo, placement::PolicyHooks* hooks, const TestOptions& options) {
  TestReport report;
  std::vector<std::pair<const model::Policy*, const model::Rule*>> rules;
  for (const model::Policy& p : repo.policies) {
    for (const model::Rule& r : p.rules) {
      rules.emplace_back(&p, &r);
      report.rules.push_back({p.metadata.name, r.name, 0, 0});
    }
  }
  for (const model::PolicyTest& test : repo.policy_tests) {
    for (const model::PolicyTestCase& c : test.cases) {
      CaseResult result;
      result.test = test.metadata.name;
      result.name = c.name;
      result.location = c.location;
      if (options.run && !std::regex_search(result.full_name(), *options.run)) continue;
      model::Workload workload = c.workload;
      workload.metadata.name = test.metadata.name + "-case";
      if (workload.tenant.empty()) {
        workload.tenant = !c.tenants.empty() ? c.tenants.front()
                          : !repo.tenants.empty() ? repo.tenants.front().metadata.name
                                                  : "";
      }
      model::Config config = CaseConfig(repo, c);
      placement::Snapshot snapshot;
      snapshot.config = &config;
      snapshot.now = c.now;
      snapshot.pending = {&workload};
      snapshot.hooks = hooks;
      placement::Plan plan = placement::MakePlan(snapshot);
      result.decision = plan.decisions.front();
      result.passed = Meets(c, result.decision, config);
      result.expected = DescribeExpectation(c.expect);
      if (!c.reasons.empty()) result.expected += "; explanation mentions \"" + Join(c.reasons, "\", \"") + "\"";
      result.actual = DescribeDecision(result.decision, config);
      result.explanation = Explain(result.decision);
      (result.passed ? report.passed : report.failed)++;

      const nlohmann::json view = model::WorkloadView(workload);
      for (size_t i = 0; i < rules.size(); ++i) {
        bool matched = std::all_of(rules[i].second->when.begin(), rules[i].second->when.end(),
                                   [&](const model::Condition& cond) { return placement::ConditionHolds(cond, view); });
        report.rules[i].matched += matched;
        bool denied = std::any_of(result.decision.verdicts.begin(), result.decision.verdicts.end(),
                                  [&](const placement::ClusterVerdict& v) { return v.rule == rules[i].second->name; });
        report.rules[i].denied += denied;
      }
      report.cases.push_back(std::move(result));
    }
  }
  return report;
}

}  // namespace gpufed::policy
