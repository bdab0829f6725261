#include "policies/engine/case_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/config/loader.h"
#include "tests/testutil/fleet_builder.h"

namespace gpufed::policy {
namespace {

using ::testing::HasSubstr;

const std::string kRepo = testutil::OnpremClusterYaml("dc1", "hgx", 2, "H100-80GB") + R"(---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: t}
spec: {budget: {limit: "100 EUR", spent: "10 EUR", cloudSpent: "5 EUR"}}
---
apiVersion: gpufed/v1alpha1
kind: PolicyTest
metadata: {name: pt}
spec:
  given:
    waited: 5m
    running: [{name: first, workload: {resources: {gpus: 6}}, cluster: dc1}]
)";

class CaseStateTest : public ::testing::Test {
 protected:
  // The repository with `cases` appended to its PolicyTest.
  const model::PolicyTest& Load(const std::string& cases) {
    result_ = config::LoadText(kRepo + "  cases:\n" + cases, "repo.yaml");
    EXPECT_TRUE(result_.ok()) << (result_.ok() ? "" : result_.diagnostics.items()[0].ToString());
    return result_.config.policy_tests.at(0);
  }
  config::LoadResult result_;
};

TEST_F(CaseStateTest, CaseFieldsOverrideTheTestsGivenOneByOne) {
  const model::PolicyTest& test = Load(
      "    - name: c\n      given: {queueAhead: 2, usage: {t: {spent: \"50 EUR\"}}}\n      expect: {placed: {}}\n");
  auto state = BuildCaseState(result_.config, test, test.cases[0], nullptr);
  ASSERT_TRUE(state.ok()) << state.status().message();
  const placement::Snapshot& s = (*state)->snapshot;
  EXPECT_EQ(s.now.ToString(), "5m");  // now defaults to the wait
  EXPECT_EQ((*state)->workload.submitted_at.ToString(), "0s");
  EXPECT_EQ(s.onprem_queue_depth, 2);
  EXPECT_EQ(s.usage.at("t").spent.ToString(), "50.00 EUR");
  EXPECT_EQ(s.usage.at("t").cloud_spent.ToString(), "5.00 EUR");  // not given: the Tenant's
  ASSERT_EQ(s.running.size(), 1u);  // from spec.given
  EXPECT_EQ(s.running[0].workload->metadata.name, "first");
  EXPECT_EQ(s.running[0].workload->tenant, "t");
  EXPECT_EQ(s.running[0].binding.pool, "hgx");
  EXPECT_EQ(s.running[0].binding.gpus[0].size(), 6u);
}

// The one snapshot builder gives every tenant of the case its spend, as a controller's
// snapshot does: without `usage`, the Tenant's declared spend.
TEST_F(CaseStateTest, EveryTenantHasItsSpendWithoutUsage) {
  const model::PolicyTest& test = Load("    - name: c\n      expect: {placed: {}}\n");
  auto state = BuildCaseState(result_.config, test, test.cases[0], nullptr);
  ASSERT_TRUE(state.ok()) << state.status().message();
  const placement::Snapshot& s = (*state)->snapshot;
  ASSERT_EQ(s.usage.count("t"), 1u);
  EXPECT_EQ(s.usage.at("t").spent.ToString(), "10.00 EUR");
  EXPECT_EQ(s.usage.at("t").cloud_spent.ToString(), "5.00 EUR");
}

TEST_F(CaseStateTest, RunningWorkIsBoundInOrder) {
  const model::PolicyTest& test = Load(
      "    - name: c\n      given:\n        running:\n"
      "          - {workload: {resources: {gpus: 6}}, cluster: dc1, node: hgx-1}\n"
      "          - {workload: {resources: {gpus: 4}}, cluster: dc1}\n"
      "          - {workload: {resources: {gpus: 4}}, cluster: dc1, node: hgx-1}\n"
      "      expect: {placed: {}}\n");
  auto state = BuildCaseState(result_.config, test, test.cases[0], nullptr);
  ASSERT_FALSE(state.ok());
  EXPECT_THAT(state.status().message(), HasSubstr("running entry 'running-3' (repo.yaml:"));
  EXPECT_THAT(state.status().message(),
              HasSubstr("cannot be bound on dc1 node hgx-1: needs 4 GPU(s), 2 of 8 are free"));
}

TEST_F(CaseStateTest, ElasticNodesAndGangsAreBoundAsThePlacerWouldTakeThem) {
  const model::PolicyTest& test = Load(
      "    - name: c\n      given:\n        running:\n"
      "          - {workload: {resources: {nodes: 2, gpusPerNode: 8}}, cluster: dc1}\n"
      "          - {workload: {resources: {gpus: 8}}, cluster: dc1, node: hgx-0}\n"
      "      expect: {placed: {}}\n");
  auto state = BuildCaseState(result_.config, test, test.cases[0], nullptr);
  ASSERT_FALSE(state.ok());  // the gang holds both nodes
  EXPECT_THAT(state.status().message(), HasSubstr("running entry 'running-2'"));

  const model::PolicyTest& pinned = Load(
      "    - name: c\n      given:\n        running:\n"
      "          - {workload: {resources: {nodes: 2, gpusPerNode: 8}}, cluster: dc1, node: hgx-0}\n"
      "      expect: {placed: {}}\n");
  state = BuildCaseState(result_.config, pinned, pinned.cases[0], nullptr);
  ASSERT_FALSE(state.ok());
  EXPECT_THAT(state.status().message(), HasSubstr("a gang of 2 nodes cannot be bound to one node"));
}

TEST_F(CaseStateTest, WaitedLongerThanNowIsAnError) {
  const model::PolicyTest& test = Load("    - name: c\n      now: 1m\n      expect: {placed: {}}\n");
  auto state = BuildCaseState(result_.config, test, test.cases[0], nullptr);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().message(), "given.waited (5m) is longer than now (1m)");
}

}  // namespace
}  // namespace gpufed::policy
