// A hook that fails on live inputs its PolicyTests never had: the pass goes on (a deny
// policy's failing filter denies), and a pass over the policy's errorBudget is journaled as
// policy-degraded and counted in the metrics.
#include <gtest/gtest.h>

#include <fstream>

#include "controller/audit/env.h"
#include "controller/audit/file_journal_storage.h"
#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {
namespace {

// Fails for workloads labelled flaky; 2 % allowed.
constexpr const char* kFlakyPolicy = R"(apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: flaky}
spec:
  enforcement: deny
  errorBudget: 2%
  lua: [hooks/flaky.lua]
)";
constexpr const char* kFlakyHook = R"(function filter(w, c, p)
  if w.labels.flaky == "yes" then error("no such field") end
  return true
end
)";

int CountKind(const std::string& state_dir, const std::string& kind, std::string* last = nullptr) {
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  auto segments = audit::ListSegments(*env, state_dir + "/audit/journal");
  if (!segments.ok()) return -1;
  int n = 0;
  for (const auto& [first, path] : *segments) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      if (line.find("\"kind\":\"" + kind + "\"") == std::string::npos) continue;
      ++n;
      if (last != nullptr) *last = line;
    }
  }
  return n;
}

TEST(PolicyDegraded, APassOverTheErrorBudgetIsJournaledAndCounted) {
  std::string dir = FreshDir("policy_degraded");
  std::filesystem::create_directories(dir + "/repo/hooks");
  std::ofstream(dir + "/repo/flaky.yaml") << kFlakyPolicy;
  std::ofstream(dir + "/repo/hooks/flaky.lua") << kFlakyHook;
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  // A healthy pass: every call succeeds.
  ASSERT_TRUE(h.controller->Submit(WorkloadYaml("fine", "alpha", 1, "1h"), "fine.yaml", By("")).ok());
  ASSERT_TRUE(h.controller->Pass().ok());
  std::string metrics = h.controller->Metrics();
  EXPECT_NE(metrics.find("gpufed_policy_degraded_passes_total{policy=\"flaky\"} 0\n"), std::string::npos) << metrics;
  // Every filter call fails for this one: the deny policy fails closed, and the pass is
  // over its 2 % budget.
  std::string odd =
      "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: odd, labels: {flaky: \"yes\"}}\n"
      "spec:\n  tenant: alpha\n  type: training\n  resources: {gpus: 1}\n  durationHint: 1h\n";
  ASSERT_TRUE(h.controller->Submit(odd, "odd.yaml", By("")).ok());
  ASSERT_TRUE(h.controller->Pass().ok());
  EXPECT_NE(h.Get("odd").state, store::WorkloadState::kPlaced);
  EXPECT_NE(h.Get("odd").state, store::WorkloadState::kRunning);
  metrics = h.controller->Metrics();
  EXPECT_NE(metrics.find("gpufed_policy_degraded_passes_total{policy=\"flaky\"} 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("gpufed_policy_hook_errors_total{policy=\"flaky\"} 2\n"), std::string::npos) << metrics;
  ASSERT_TRUE(h.Stop("test done").ok());
  std::string record;
  EXPECT_EQ(CountKind(h.state_dir(), "policy-degraded", &record), 1);
  EXPECT_NE(record.find("\"policy\":\"flaky\""), std::string::npos) << record;
  EXPECT_NE(record.find("\"enforcement\":\"deny\""), std::string::npos) << record;
  EXPECT_NE(record.find("hooks/flaky.lua:2"), std::string::npos) << record;
}

}  // namespace
}  // namespace gpufed::testing
