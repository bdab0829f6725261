#include "controller/reconcile/policy_health.h"


#include "controller/common/metrics_text.h"

namespace gpufed::reconcile {

std::vector<audit::PolicyDegradedEvent> PolicyHealth::AfterPass(const std::vector<policy::HookSet::PolicyCalls>& calls,
                                                                const model::Config& config) {
  std::vector<audit::PolicyDegradedEvent> degraded;
  for (const policy::HookSet::PolicyCalls& c : calls) {
    Totals& t = totals_[c.policy];
    t.calls += c.calls;
    t.errors += c.errors;
    if (c.calls == 0) continue;  // not called this pass: the last ratio stands
    t.last_ratio = static_cast<double>(c.errors) / static_cast<double>(c.calls);
    const model::Policy* p = nullptr;
    for (const model::Policy& candidate : config.policies) {
      if (candidate.metadata.name == c.policy) p = &candidate;
    }
    const double budget = p != nullptr ? p->error_budget : model::Policy().error_budget;
    // Strictly more than the budget; a budget of 0 reports any failure.
    if (c.errors == 0 || t.last_ratio <= budget) continue;
    ++t.degraded_passes;
    degraded.push_back({c.policy, config.revision, model::EnforcementName(p != nullptr ? p->enforcement : model::Enforcement::kDeny),
                        c.calls, c.errors, budget, c.last_error});
  }
  return degraded;
}

std::string PolicyHealth::Metrics() const {
  MetricsText m;
  using T = MetricsText::Type;
  auto family = [&](const char* name, T type, const char* help, auto value) {
    m.Family(name, type, help);
    for (const auto& [policy, t] : totals_) m.Sample({{"policy", policy}}, static_cast<double>(value(t)));
  };
  family("gpufed_policy_hook_calls_total", T::kCounter, "Lua hook calls by policy.", [](const auto& t) { return t.calls; });
  family("gpufed_policy_hook_errors_total", T::kCounter,
         "Lua hook calls that raised an error or ran out of their budget, by policy.", [](const auto& t) { return t.errors; });
  family("gpufed_policy_degraded_passes_total", T::kCounter,
         "Reconcile passes in which a policy's hooks failed on more than its errorBudget of calls.",
         [](const auto& t) { return t.degraded_passes; });
  family("gpufed_policy_hook_error_ratio", T::kGauge,
         "Share of a policy's hook calls that failed in the last pass that called it.", [](const auto& t) { return t.last_ratio; });
  return m.str();
}

}  // namespace gpufed::reconcile
