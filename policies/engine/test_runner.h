#pragma once
// Runs a repository's PolicyTests: each case is one placer pass over the named clusters
// and tenants with one workload, in the state its `given` describes (case_state.h),
// compared with the case's expectation (expectations.h).
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "controller/model/config.h"
#include "controller/placement/plan.h"

namespace gpufed::policy {

struct CaseResult {
  std::string test;       // the PolicyTest's name
  std::string name;       // the case's name
  model::SourceLocation location;
  bool passed = false;
  std::string expected;   // "placed on provider=onprem"
  std::string actual;     // "queued by capacity: waiting: ..."
  std::string error;      // the case could not be set up (its `given`): not run
  // Hooks that raised or ran out of budget during the case (policy, file, line, message):
  // the case fails even when the decision met the expectation.
  std::vector<std::string> hook_errors;
  std::vector<std::string> explanation;  // per cluster: rule and reason, or score
  placement::Decision decision;

  std::string full_name() const { return test + "/" + name; }
};

struct RuleCoverage {
  std::string policy, rule;
  int matched = 0;  // cases whose workload matched the rule's `when`
  int denied = 0;   // cases where the rule rejected at least one cluster
};

struct TestReport {
  std::vector<CaseResult> cases;
  std::vector<RuleCoverage> rules;
  int passed = 0;
  int failed = 0;
};

struct TestOptions {
  std::optional<std::regex> run;  // only cases whose "test/case" name matches
};

// `hooks` may be null (no Lua). Cases run in file order; deterministic.
TestReport RunPolicyTests(const model::Config& config, placement::PolicyHooks* hooks, const TestOptions& options = {});

}  // namespace gpufed::policy
