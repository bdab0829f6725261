#include "policies/engine/activation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/testutil/fleet_builder.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::policy {
namespace {

using ::testing::HasSubstr;

const std::string kCluster = testutil::OnpremClusterYaml("onprem", "a", 1) + R"(---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: t}
spec: {}
)";

std::string PolicyWithTest(const std::string& expect) {
  return std::string(R"(apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: p}
spec: {lua: [rules/p.lua]}
---
apiVersion: gpufed/v1alpha1
kind: PolicyTest
metadata: {name: pt}
spec:
  cases:
    - name: one gpu
      workload: {resources: {gpus: 1}}
      expect: )") +
         expect + "\n";
}

// A repository whose one PolicyTest passes with a trivial admit hook.
void WriteGoodRepository(testutil::TempDir& dir) {
  dir.Write("fleet.yaml", kCluster);
  dir.Write("policy.yaml", PolicyWithTest("{placed: {cluster: onprem}}"));
  dir.Write("rules/p.lua", "function admit(w) return true end\n");
}

TEST(Activation, GoodRevisionActivatesAndBadOnesKeepTheLastGood) {
  testutil::TempDir dir;
  WriteGoodRepository(dir);
  PolicyActivator activator;
  ASSERT_TRUE(activator.Reload({dir.str()}).ok());
  ASSERT_NE(activator.active(), nullptr);
  std::string good = activator.active()->config.revision;
  EXPECT_EQ(activator.active()->tests.passed, 1);

  // A PolicyTest that fails: rejected, the good revision stays.
  dir.Write("policy.yaml", PolicyWithTest("{queued: {}}"));
  Status status = activator.Reload({dir.str()});
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("PolicyTest pt/one gpu"));
  EXPECT_THAT(status.message(), HasSubstr("revision " + good + " stays active"));
  EXPECT_EQ(activator.active()->config.revision, good);
  EXPECT_NE(activator.rejected_revision(), good);

  // Lua that does not compile: rejected with file and line.
  dir.Write("policy.yaml", PolicyWithTest("{placed: {cluster: onprem}}"));
  dir.Write("rules/p.lua", "function admit(w)\n  return true\n");
  status = activator.Reload({dir.str()});
  EXPECT_THAT(status.message(), HasSubstr("rules/p.lua"));
  EXPECT_EQ(activator.active()->config.revision, good);

  // Invalid YAML: rejected with the diagnostic.
  dir.Write("rules/p.lua", "function admit(w) return true end\n");
  dir.Write("bad.yaml", "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t2}\nspec: {wieght: 1}\n");
  status = activator.Reload({dir.str()});
  EXPECT_THAT(status.message(), HasSubstr("did you mean 'weight'"));
  EXPECT_EQ(activator.active()->config.revision, good);

  // Fixed: the new revision activates.
  dir.Write("bad.yaml", "apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: t2}\nspec: {weight: 1}\n");
  EXPECT_TRUE(activator.Reload({dir.str()}).ok());
  EXPECT_NE(activator.active()->config.revision, good);
  EXPECT_TRUE(activator.last_rejection().empty());
}

TEST(Activation, ReportingFailingTestsStillPreparesTheRevision) {
  testutil::TempDir dir;
  dir.Write("fleet.yaml", kCluster);
  dir.Write("policy.yaml", PolicyWithTest("{queued: {}}"));
  dir.Write("rules/p.lua", "function admit(w) return true end\n");
  Candidate reported = PrepareRevision({dir.str()}, nullptr, TestGate::kReport);
  ASSERT_TRUE(reported.revision);  // `plan --ignore-tests` plans with it
  ASSERT_EQ(reported.failing_tests.size(), 1u);
  EXPECT_THAT(reported.failing_tests[0], HasSubstr("PolicyTest pt/one gpu"));
  EXPECT_FALSE(PrepareRevision({dir.str()}, nullptr).revision);  // activation never takes it
}

// A hook that raises, or that runs out of its instruction budget, during a PolicyTest
// fails the case even though the placer's fallback met the expectation: such a
// revision is not activated, and the failure names policy, file and line.
TEST(Activation, HookErrorsInPolicyTestsKeepARevisionFromActivating) {
  testutil::TempDir dir;
  WriteGoodRepository(dir);
  PolicyActivator activator;
  ASSERT_TRUE(activator.Reload({dir.str()}).ok());
  const std::string good = activator.active()->config.revision;
  for (const std::string& hook : {std::string("function score(w, c)\n  while true do end\nend\n"),
                                  std::string("function score(w, c)\n  error('boom')\nend\n"),
                                  std::string("function filter(w, c)\n  return w.no.such.field\nend\n")}) {
    dir.Write("rules/p.lua", hook);
    Status status = activator.Reload({dir.str()});
    EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << hook;
    EXPECT_THAT(status.message(), HasSubstr("PolicyTest pt/one gpu")) << hook;
    EXPECT_THAT(status.message(), HasSubstr("hook error: policy 'p' (rules/p.lua:2)")) << status.message();
    EXPECT_EQ(activator.active()->config.revision, good);
  }
}

TEST(Activation, LuaErrorsAreDiagnosticsWithFileLineAndColumn) {
  testutil::TempDir dir;
  dir.Write("fleet.yaml", kCluster);
  dir.Write("policy.yaml", PolicyWithTest("{placed: {}}"));
  dir.Write("rules/p.lua", "function admit(w)\n  return true\n");
  Candidate candidate = PrepareRevision({dir.str()}, nullptr);
  ASSERT_EQ(candidate.problems.size(), 1u);
  EXPECT_THAT(candidate.problems[0], HasSubstr("rules/p.lua:3:1: error: lua: 'end' expected"));
}

TEST(Activation, QuickstartActivatesWithAllTestsPassing) {
  Candidate candidate = PrepareRevision({std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart"}, nullptr);
  ASSERT_TRUE(candidate.revision) << (candidate.problems.empty() ? "" : candidate.problems.front());
  EXPECT_GE(candidate.revision->tests.passed, 15);
  EXPECT_EQ(candidate.revision->tests.failed, 0);
  EXPECT_FALSE(candidate.revision->hooks->empty());
}

}  // namespace
}  // namespace gpufed::policy
