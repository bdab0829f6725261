#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/config/loader.h"
#include "controller/placement/hooks.h"
#include "controller/placement/plan.h"

namespace gpufed::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A small fleet: on-prem (2 nodes x 4 A100, EU), an EU cloud (elastic) and a US cloud.
constexpr const char* kFleet = R"(
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: onprem}
spec:
  provider: onprem
  zone: eu
  connector: {type: sim}
  attributes: {encryptionAtRest: true}
  nodePools: [{name: a100, count: 2, gpu: {model: A100-80GB, count: 4, memory: 80Gi, nvlink: true}}]
  pricing: {currency: EUR, gpuHour: {A100-80GB: "1.00"}}
  datasets: [local-data]
---
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: eu-cloud}
spec:
  provider: ionos
  zone: eu
  connector: {type: sim}
  nodePools: [{name: h100, count: 1, gpu: {model: H100-80GB, count: 8, memory: 80Gi, nvlink: true}}]
  elasticity: {maxNodes: 2, provisionDelay: 3m}
  pricing: {currency: EUR, gpuHour: {H100-80GB: "4.00"}, egressPerGiB: "0.10"}
---
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: us-cloud}
spec:
  provider: aws
  zone: us
  connector: {type: sim}
  nodePools: [{name: a100, count: 1, gpu: {model: A100-80GB, count: 8, memory: 80Gi, nvlink: true}}]
  pricing: {currency: EUR, gpuHour: {A100-80GB: "2.00"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: team-a}
spec: {weight: 1, quota: {maxGpus: 64}, budget: {limit: "10000 EUR", cloudLimit: "5000 EUR"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: team-b}
spec: {weight: 1}
---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: base}
spec:
  rules:
    - name: restricted-stays-onprem
      when: {data.sensitivity: restricted}
      require: {cluster.provider: onprem}
    - name: pii-in-eu
      when: {data.pii: true}
      require: {cluster.zone: {in: [eu]}}
)";

std::string Workload(const std::string& name, const std::string& spec) {
  return "---\napiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: " + name + "}\nspec: " + spec + "\n";
}

class PlacerTest : public ::testing::Test {
 protected:
  Plan PlanFor(const std::string& extra_yaml, Duration now = Duration()) {
    result_ = config::LoadText(std::string(kFleet) + extra_yaml, "test.yaml");
    EXPECT_TRUE(result_.ok()) << (result_.ok() ? "" : result_.diagnostics.items()[0].ToString());
    Snapshot snapshot;
    snapshot.config = &result_.config;
    snapshot.now = now;
    for (const model::Workload& w : result_.config.workloads) snapshot.pending.push_back(&w);
    snapshot.hooks = hooks_;
    return MakePlan(snapshot);
  }
  const Decision& Find(const Plan& plan, const std::string& name) {
    for (const Decision& d : plan.decisions) {
      if (d.workload == name) return d;
    }
    ADD_FAILURE() << "no decision for " << name;
    return plan.decisions.front();
  }
  config::LoadResult result_;
  PolicyHooks* hooks_ = nullptr;
};

TEST_F(PlacerTest, PrefersOnPremWhenItFits) {
  Plan plan = PlanFor(Workload("w", "{tenant: team-a, resources: {gpus: 4}}"));
  const Decision& d = Find(plan, "w");
  EXPECT_EQ(d.outcome, Outcome::kPlaced);
  EXPECT_EQ(d.binding.cluster, "onprem");
  EXPECT_THAT(d.binding.gpus, ElementsAre(ElementsAre(0, 1, 2, 3)));
  EXPECT_EQ(d.cost.ToString(), "4.00 EUR");  // 4 GPUs x 1h x 1.00
}

TEST_F(PlacerTest, RestrictedDataQueuesRatherThanLeaveOnPrem) {
  Plan plan = PlanFor(Workload("big", "{tenant: team-a, priority: high, resources: {gpus: 4}}") +
                      Workload("big2", "{tenant: team-a, priority: high, resources: {gpus: 4}}") +
                      Workload("secret", "{tenant: team-a, resources: {gpus: 1}, data: {sensitivity: restricted}}"));
  const Decision& d = Find(plan, "secret");
  EXPECT_EQ(d.outcome, Outcome::kQueued);
  EXPECT_EQ(d.verdicts[0].rule, "restricted-stays-onprem");  // eu-cloud
  EXPECT_EQ(d.verdicts[1].rule, "capacity");                  // onprem, full
}

TEST_F(PlacerTest, RejectsWhenEveryClusterIsDenied) {
  Plan plan = PlanFor(Workload("w", "{tenant: team-a, resources: {gpus: 1, gpuModels: [A100-80GB]}, "
                                    "data: {pii: true, sensitivity: restricted}}") +
                      R"(---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: zz-onprem-off}
spec:
  rules: [{name: onprem-maintenance, require: {cluster.provider: {notIn: [onprem]}}}]
)");
  const Decision& d = Find(plan, "w");
  EXPECT_EQ(d.outcome, Outcome::kRejected);
  // The first rule that rejects each cluster: eu-cloud, onprem, us-cloud.
  EXPECT_THAT(d.denied_by, ElementsAre("restricted-stays-onprem", "onprem-maintenance"));
  EXPECT_EQ(d.verdicts[2].rule, "restricted-stays-onprem");
}

TEST_F(PlacerTest, DataResidencyIsABuiltInCheck) {
  Plan plan = PlanFor(Workload("w", "{tenant: team-a, resources: {gpus: 1}, data: {residency: [us]}}"));
  const Decision& d = Find(plan, "w");
  EXPECT_EQ(d.binding.cluster, "us-cloud");
  EXPECT_EQ(d.verdicts[1].rule, "data-residency");
}

TEST_F(PlacerTest, HardwareThatNeverFitsIsRejected) {
  Plan plan = PlanFor(Workload("w", "{tenant: team-a, resources: {gpus: 16, topology: same-node}}"));
  const Decision& d = Find(plan, "w");
  EXPECT_EQ(d.outcome, Outcome::kRejected);
  EXPECT_THAT(d.denied_by, ElementsAre("hardware"));
  EXPECT_THAT(d.verdicts[1].reason, HasSubstr("needs 16 GPUs on one node"));
}

TEST_F(PlacerTest, TopologyAnySpreadsOverTheFewestNodesOfOneCluster) {
  // 6 GPUs fit no 4-GPU node: spread over both on-prem nodes (4 + 2), not refused.
  Plan plan = PlanFor(Workload("w", "{tenant: team-a, resources: {gpus: 6}}"));
  const Decision& d = Find(plan, "w");
  ASSERT_EQ(d.outcome, Outcome::kPlaced) << d.reason;
  EXPECT_EQ(d.binding.cluster, "onprem");
  EXPECT_EQ(d.binding.pool, "a100");
  ASSERT_EQ(d.binding.nodes.size(), 2u);
  EXPECT_EQ(d.binding.gpus[0].size() + d.binding.gpus[1].size(), 6u);
  EXPECT_EQ(d.binding.gpus[0].size(), 4u);
  EXPECT_THAT(d.reason, HasSubstr("spread over 2 nodes"));
}

TEST_F(PlacerTest, TopologyAnyTakesOneNodeWhenOneHasRoom) {
  Plan plan = PlanFor(Workload("w", "{tenant: team-a, resources: {gpus: 3}}"));
  const Decision& d = Find(plan, "w");
  ASSERT_EQ(d.outcome, Outcome::kPlaced);
  EXPECT_EQ(d.binding.nodes.size(), 1u);
}

TEST_F(PlacerTest, MaxCostFiltersExpensiveClusters) {
  Plan plan = PlanFor(Workload("fill", "{tenant: team-a, priority: high, resources: {nodes: 2, gpusPerNode: 4}}") +
                      Workload("cheap", "{tenant: team-a, resources: {gpus: 8}, maxCost: \"20 EUR\"}"));
  const Decision& d = Find(plan, "cheap");
  EXPECT_EQ(d.outcome, Outcome::kPlaced);
  EXPECT_EQ(d.binding.cluster, "us-cloud");  // 16 EUR; eu-cloud would be 32 EUR
  EXPECT_EQ(d.verdicts[0].rule, "max-cost");
  EXPECT_THAT(d.verdicts[0].reason, HasSubstr("exceeds maxCost 20.00 EUR"));
}

TEST_F(PlacerTest, TenantBudgetQueuesWorkThatFitsALaterPeriod) {
  // same-node: on-prem's 4-GPU nodes cannot hold them, only the clouds can.
  Plan plan = PlanFor(Workload("w", "{tenant: team-a, resources: {gpus: 8, topology: same-node}, durationHint: 200h}") +
                      Workload("x", "{tenant: team-a, resources: {gpus: 8, topology: same-node}, durationHint: 200h, "
                                    "submittedAt: 1s}"));
  EXPECT_EQ(Find(plan, "w").outcome, Outcome::kPlaced);  // 3200.00 of the 5000.00 EUR cloud limit
  const Decision& d = Find(plan, "x");
  EXPECT_EQ(d.outcome, Outcome::kQueued);
  EXPECT_THAT(d.reason, HasSubstr("tenant budget exhausted"));
}

TEST_F(PlacerTest, TenantBudgetQueuesWorkOverTheWholeLimitAndSaysSo) {
  Plan plan = PlanFor(Workload("w", "{tenant: team-a, resources: {gpus: 8, topology: same-node}, durationHint: 1000h}"));
  const Decision& d = Find(plan, "w");
  EXPECT_EQ(d.outcome, Outcome::kQueued);
  EXPECT_THAT(d.reason, HasSubstr("tenant budget exhausted"));
  EXPECT_THAT(d.reason, HasSubstr("costs more than the whole limit"));
}

TEST_F(PlacerTest, QuotaQueuesWork) {
  Plan plan = PlanFor(R"(---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: small}
spec: {quota: {maxGpus: 2}}
)" + Workload("a", "{tenant: small, resources: {gpus: 2}}") +
                      Workload("b", "{tenant: small, resources: {gpus: 1}}"));
  EXPECT_EQ(Find(plan, "a").outcome, Outcome::kPlaced);
  EXPECT_EQ(Find(plan, "b").outcome, Outcome::kQueued);
  EXPECT_THAT(Find(plan, "b").reason, HasSubstr("tenant quota: 2 of 2 GPUs in use"));
}

constexpr const char* kBurstPolicy = R"(---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: burst}
spec: {burst: {queueWait: 10m, queueDepth: 2}}
)";

TEST_F(PlacerTest, BurstWaitsForTheQueueDepthThreshold) {
  std::string yaml = kBurstPolicy + Workload("fill", "{tenant: team-a, priority: high, resources: {nodes: 2, gpusPerNode: 4}}");
  for (int i = 1; i <= 3; ++i) {
    yaml += Workload("w" + std::to_string(i), "{tenant: team-a, resources: {gpus: 1}, submittedAt: " + std::to_string(i) + "s}");
  }
  Plan plan = PlanFor(yaml);
  EXPECT_EQ(Find(plan, "w1").outcome, Outcome::kQueued);
  EXPECT_THAT(Find(plan, "w1").reason, HasSubstr("on-prem queue depth 0 below burst threshold 2"));
  EXPECT_EQ(Find(plan, "w2").outcome, Outcome::kQueued);
  EXPECT_EQ(Find(plan, "w3").outcome, Outcome::kPlaced);
  EXPECT_NE(Find(plan, "w3").binding.cluster, "onprem");
}

TEST_F(PlacerTest, BurstAfterQueueWait) {
  std::string yaml = kBurstPolicy + Workload("fill", "{tenant: team-a, priority: high, resources: {nodes: 2, gpusPerNode: 4}}") +
                     Workload("w", "{tenant: team-a, resources: {gpus: 1}}");
  EXPECT_EQ(Find(PlanFor(yaml, Duration::FromSeconds(300)), "w").outcome, Outcome::kQueued);
  EXPECT_EQ(Find(PlanFor(yaml, Duration::FromSeconds(600)), "w").outcome, Outcome::kPlaced);
}

TEST_F(PlacerTest, WarnAndDryRunRulesOnlyReport) {
  Plan plan = PlanFor(std::string(R"(---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: trial}
spec:
  enforcement: dryrun
  rules: [{name: no-onprem, require: {cluster.provider: aws}}]
)") + Workload("w", "{tenant: team-a, resources: {gpus: 1}}"));
  const Decision& d = Find(plan, "w");
  EXPECT_EQ(d.binding.cluster, "onprem");
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_THAT(d.warnings[0], HasSubstr("dryrun no-onprem would deny"));
}

TEST_F(PlacerTest, NodeLevelRulesRestrictPools) {
  Plan plan = PlanFor(std::string(R"(---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: models}
spec:
  rules: [{name: h100-only, when: {type: training}, require: {node.gpu.model: H100-80GB}}]
)") + Workload("w", "{tenant: team-a, type: training, resources: {gpus: 1}}"));
  const Decision& d = Find(plan, "w");
  EXPECT_EQ(d.binding.cluster, "eu-cloud");  // the only H100s; on-prem is denied, so no burst wait
  EXPECT_EQ(d.verdicts[1].rule, "h100-only");
}

TEST_F(PlacerTest, MultiNodeGangsUseDistinctNodesOfOneCluster) {
  Plan plan = PlanFor(Workload("gang", "{tenant: team-a, resources: {nodes: 2, gpusPerNode: 4, topology: same-node}}"));
  const Decision& d = Find(plan, "gang");
  ASSERT_EQ(d.outcome, Outcome::kPlaced);
  EXPECT_EQ(d.binding.cluster, "onprem");
  EXPECT_THAT(d.binding.nodes, ElementsAre("a100-0", "a100-1"));
}

TEST_F(PlacerTest, ElasticClustersProvisionNodes) {
  Plan plan = PlanFor(Workload("w", "{tenant: team-a, resources: {gpus: 8, gpuModels: [H100-80GB]}}") +
                      Workload("x", "{tenant: team-a, resources: {gpus: 8, gpuModels: [H100-80GB]}}"));
  const Decision& x = Find(plan, "x");
  ASSERT_EQ(x.outcome, Outcome::kPlaced);
  EXPECT_TRUE(x.binding.provisions_node);
  EXPECT_EQ(x.binding.ready_after.ToString(), "3m");
}

TEST_F(PlacerTest, HigherPriorityGoesFirstAndTenantsShareFairly) {
  Plan plan = PlanFor(Workload("a1", "{tenant: team-a, resources: {gpus: 1}}") +
                      Workload("a2", "{tenant: team-a, resources: {gpus: 1}}") +
                      Workload("a3", "{tenant: team-a, resources: {gpus: 1}}") +
                      Workload("b1", "{tenant: team-b, resources: {gpus: 1}}") +
                      Workload("urgent", "{tenant: team-b, priority: critical, resources: {gpus: 1}}"));
  std::vector<std::string> order;
  for (const Decision& d : plan.decisions) order.push_back(d.workload);
  // urgent first; then the tenant with the smaller share (ties by name) each time.
  EXPECT_THAT(order, ElementsAre("urgent", "a1", "a2", "b1", "a3"));
}

class FakeHooks : public PolicyHooks {
 public:
  std::vector<HookOutcome> Admit(const nlohmann::json&, double) override { return {}; }
  std::vector<HookOutcome> Filter(const nlohmann::json&, const nlohmann::json& c, double) override {
    if (c["name"] == "onprem") return {{false, "lua-policy", "rules/x.lua:3: boom", true, true}};
    if (c["name"] == "us-cloud") return {{false, "warn-policy", "not here", false, false}};
    return {};
  }
  double Score(const nlohmann::json&, const nlohmann::json& c, double, std::vector<std::string>&) override {
    return c["name"] == "us-cloud" ? 100 : 0;
  }
};

TEST_F(PlacerTest, HookErrorsFailClosedAndWarnHooksOnlyReport) {
  FakeHooks hooks;
  hooks_ = &hooks;
  Plan plan = PlanFor(Workload("w", "{tenant: team-a, resources: {gpus: 1}}"));
  const Decision& d = Find(plan, "w");
  EXPECT_EQ(d.verdicts[1].rule, "policy-error");
  EXPECT_THAT(d.verdicts[1].reason, HasSubstr("rules/x.lua:3"));
  EXPECT_EQ(d.binding.cluster, "us-cloud");  // its Lua score wins
  EXPECT_EQ(d.verdicts[2].score.lua, 100);
}

std::string Fingerprint(const Plan& plan) {
  std::string s = plan.revision;
  for (const Decision& d : plan.decisions) {
    s += d.workload + OutcomeName(d.outcome) + d.binding.cluster + d.reason + d.cost.ToString();
    for (const std::string& n : d.binding.nodes) s += n;
    for (const auto& member : d.binding.gpus) {
      for (int g : member) s += std::to_string(g);
    }
    for (const ClusterVerdict& v : d.verdicts) s += v.rule + v.reason + std::to_string(v.score.total);
  }
  return s;
}

// Class lookups build the view members the hooks' reads look under (RFC 6901 tokens).
TEST(ViewReads, ReadMemberIsThePointersFirstTokenUnescaped) {
  using Kind = ViewRead::Kind;
  EXPECT_EQ(ReadMember({"/data/sensitivity", Kind::kValue}), "data");
  EXPECT_EQ(ReadMember({"/labels", Kind::kLength}), "labels");
  EXPECT_EQ(ReadMember({"/a~1b/c", Kind::kWhole}), "a/b");
  EXPECT_EQ(ReadMember({"/a~0b", Kind::kValue}), "a~b");
  EXPECT_EQ(ReadMember({"/", Kind::kValue}), "");
  EXPECT_EQ(ReadMember({"", Kind::kWhole}), std::nullopt);  // the view itself
  EXPECT_EQ(ReadMember({"", Kind::kNow}), std::nullopt);
  EXPECT_EQ(ReadMember({"data", Kind::kValue}), std::nullopt);  // reads nothing
  // Observe agrees: what is under the member reads the same in a view of that member.
  const nlohmann::json whole = {{"data", {{"pii", true}}}, {"tenant", "t"}};
  const nlohmann::json part = {{"data", {{"pii", true}}}};
  EXPECT_EQ(Observe(whole, {"/data/pii", Kind::kValue}), Observe(part, {"/data/pii", Kind::kValue}));
}

TEST(PlacerDeterminism, QuickstartPlansAreIdentical) {
  config::LoadResult repo = config::LoadRepository({std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart"});
  ASSERT_TRUE(repo.ok());
  Snapshot snapshot;
  snapshot.config = &repo.config;
  for (const model::Workload& w : repo.config.workloads) snapshot.pending.push_back(&w);
  std::string first = Fingerprint(MakePlan(snapshot));
  // Input order must not matter either.
  std::reverse(snapshot.pending.begin(), snapshot.pending.end());
  EXPECT_EQ(first, Fingerprint(MakePlan(snapshot)));
  EXPECT_EQ(first, Fingerprint(MakePlan(snapshot)));
}

}  // namespace
}  // namespace gpufed::placement
