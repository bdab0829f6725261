#include "controller/reconcile/policy_health.h"

#include <gtest/gtest.h>

namespace gpufed::reconcile {
namespace {

model::Config TwoPolicies() {
  model::Config config;
  config.revision = "rev1";
  model::Policy strict;
  strict.metadata.name = "strict";
  strict.error_budget = 0;  // any failure is reported
  model::Policy lenient;
  lenient.metadata.name = "lenient";
  lenient.enforcement = model::Enforcement::kWarn;
  lenient.error_budget = 0.25;
  config.policies = {strict, lenient};
  return config;
}

TEST(PolicyHealth, ReportsAPolicyOnlyWhenItsFailuresExceedItsBudgetInAPass) {
  PolicyHealth health;
  const model::Config config = TwoPolicies();
  // 1 of 100 fails for strict (budget 0): reported; 25 of 100 for lenient: at, not over.
  auto degraded = health.AfterPass({{"lenient", 100, 25, "lenient.lua:3: boom"}, {"strict", 100, 1, "s.lua:9: x"}}, config);
  ASSERT_EQ(degraded.size(), 1u);
  EXPECT_EQ(degraded[0].policy, "strict");
  EXPECT_EQ(degraded[0].enforcement, "deny");
  EXPECT_EQ(degraded[0].errors, 1);
  EXPECT_EQ(degraded[0].calls, 100);
  EXPECT_EQ(degraded[0].revision, "rev1");
  EXPECT_EQ(degraded[0].last_error, "s.lua:9: x");
  // One more failure for lenient is over its budget.
  degraded = health.AfterPass({{"lenient", 100, 26, "lenient.lua:3: boom"}, {"strict", 100, 0, ""}}, config);
  ASSERT_EQ(degraded.size(), 1u);
  EXPECT_EQ(degraded[0].policy, "lenient");
  EXPECT_EQ(degraded[0].enforcement, "warn");
  EXPECT_DOUBLE_EQ(degraded[0].error_budget, 0.25);
}

TEST(PolicyHealth, MetricsCountEveryCallAndKeepZerosForHealthyPolicies) {
  PolicyHealth health;
  const model::Config config = TwoPolicies();
  (void)health.AfterPass({{"lenient", 10, 0, ""}, {"strict", 4, 2, "e"}}, config);
  (void)health.AfterPass({{"lenient", 10, 0, ""}, {"strict", 0, 0, ""}}, config);
  const std::string m = health.Metrics();
  EXPECT_NE(m.find("gpufed_policy_hook_calls_total{policy=\"lenient\"} 20\n"), std::string::npos) << m;
  EXPECT_NE(m.find("gpufed_policy_hook_errors_total{policy=\"lenient\"} 0\n"), std::string::npos) << m;
  EXPECT_NE(m.find("gpufed_policy_hook_errors_total{policy=\"strict\"} 2\n"), std::string::npos) << m;
  EXPECT_NE(m.find("gpufed_policy_degraded_passes_total{policy=\"strict\"} 1\n"), std::string::npos) << m;
  // strict was not called in the second pass: its last ratio stands.
  EXPECT_NE(m.find("gpufed_policy_hook_error_ratio{policy=\"strict\"} 0.5\n"), std::string::npos) << m;
}

}  // namespace
}  // namespace gpufed::reconcile
