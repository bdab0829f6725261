#pragma once
// Holds each policy to its errorBudget at run time. PolicyTests keep a revision whose
// hooks fail from being activated, but a hook can still fail on live inputs the tests
// never had (a field a new workload lacks, a loop that runs out of instructions). The
// placer then carries on: a deny policy's failing admit/filter hook denies (fail closed),
// other failures are skipped. That must not go unseen: after every pass, a policy whose
// hooks failed on more than its errorBudget of calls in that pass is reported as a
// policy-degraded journal record, and every policy's calls and failures are metrics.
#include <map>
#include <string>
#include <vector>

#include "controller/audit/records.h"
#include "controller/model/config.h"
#include "policies/engine/hook_set.h"

namespace gpufed::reconcile {

class PolicyHealth {
 public:
  // Adds one pass's hook calls (HookSet::TakeCallStats) under `config`; returns the
  // policies over their errorBudget in that pass, ready to journal.
  std::vector<audit::PolicyDegradedEvent> AfterPass(const std::vector<policy::HookSet::PolicyCalls>& calls,
                                                    const model::Config& config);
  // Prometheus text: gpufed_policy_hook_calls_total, gpufed_policy_hook_errors_total,
  // gpufed_policy_degraded_passes_total and gpufed_policy_hook_error_ratio (last pass),
  // every policy with Lua hooks present, at zero when nothing failed.
  std::string Metrics() const;

 private:
  struct Totals {
    int64_t calls = 0;
    int64_t errors = 0;
    int64_t degraded_passes = 0;
    double last_ratio = 0;
  };
  std::map<std::string, Totals> totals_;  // by policy
};

}  // namespace gpufed::reconcile
