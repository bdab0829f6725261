#include "policies/engine/test_runner.h"

#include <algorithm>

#include "controller/model/views.h"
#include "controller/placement/matcher.h"
#include "policies/engine/case_state.h"
#include "policies/engine/expectations.h"
#include "policies/engine/hook_error_recorder.h"

namespace gpufed::policy {

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
      result.expected = DescribeExpectation(c);
      // A hook that fails in a case fails the case, whatever the placer decided without it.
      std::optional<HookErrorRecorder> recorder;
      if (hooks != nullptr) recorder.emplace(hooks);
      Result<std::unique_ptr<CaseState>> state = BuildCaseState(repo, test, c, recorder ? &*recorder : nullptr);
      if (!state.ok()) {
        result.error = state.status().message();
        result.actual = "not run: " + result.error;
        report.failed++;
        report.cases.push_back(std::move(result));
        continue;
      }
      const CaseState& s = **state;
      placement::Plan plan = placement::MakePlan(s.snapshot);
      result.decision = plan.decisions.front();
      result.passed = Meets(c, result.decision, s.config);
      result.actual = DescribeDecision(result.decision, s.config);
      result.explanation = ExplainDecision(result.decision);
      result.hook_errors = recorder ? recorder->TakeErrors() : std::vector<std::string>{};
      if (!result.hook_errors.empty()) result.passed = false;
      (result.passed ? report.passed : report.failed)++;

      const nlohmann::json view = model::WorkloadView(s.workload);
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
