// Pool-level rules of one decision (issue 37): spot capacity only for work that allows
// it, cost caps judged on the pool bound, requests above the tenant's maxGpus refused at
// once, a filter hook's pool denials, and an outage explained as an outage.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/config/loader.h"
#include "controller/placement/hooks.h"
#include "controller/placement/plan.h"

namespace gpufed::placement {
namespace {

using ::testing::HasSubstr;

// One cloud with a spot L4 pool (0.30), an on-demand L4 pool (0.80) and an H100 pool
// (3.60); one with spot capacity only.
constexpr const char* kFleet = R"(
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: cloud}
spec:
  provider: aws
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: l4-spot, count: 1, spot: true, gpu: {model: L4, count: 4, memory: 24Gi}}
    - {name: l4, count: 1, gpu: {model: L4, count: 4, memory: 24Gi}}
    - {name: h100, count: 1, gpu: {model: H100-80GB, count: 8, memory: 80Gi, nvlink: true}}
  pricing: {currency: EUR, gpuHour: {L4: "0.80", H100-80GB: "3.60"}, spotGpuHour: {L4: "0.30"}}
---
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: spot-only}
spec:
  provider: gcp
  zone: eu
  connector: {type: sim}
  nodePools: [{name: a100-spot, count: 1, spot: true, gpu: {model: A100-80GB, count: 8, memory: 80Gi}}]
  pricing: {currency: EUR, gpuHour: {A100-80GB: "2.00"}, spotGpuHour: {A100-80GB: "0.90"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: team}
spec: {weight: 1, quota: {maxGpus: 12}, budget: {limit: "100 EUR"}}
)";

std::string Workload(const std::string& spec) {
  return "---\napiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: w}\nspec: " + spec + "\n";
}

class PlacerPoolsTest : public ::testing::Test {
 protected:
  Decision DecisionFor(const std::string& spec) {
    result_ = config::LoadText(std::string(kFleet) + Workload(spec), "test.yaml");
    EXPECT_TRUE(result_.ok()) << (result_.ok() ? "" : result_.diagnostics.items()[0].ToString());
    Snapshot snapshot;
    snapshot.config = &result_.config;
    for (const model::Workload& w : result_.config.workloads) snapshot.pending.push_back(&w);
    snapshot.hooks = hooks_;
    snapshot.observed = observed_;
    Plan plan = MakePlan(snapshot);
    EXPECT_EQ(plan.decisions.size(), 1u);
    return plan.decisions.empty() ? Decision() : plan.decisions.front();
  }
  static const ClusterVerdict* VerdictOn(const Decision& d, const std::string& cluster) {
    for (const ClusterVerdict& v : d.verdicts) {
      if (v.cluster == cluster) return &v;
    }
    return nullptr;
  }
  config::LoadResult result_;
  PolicyHooks* hooks_ = nullptr;
  std::map<std::string, ObservedCluster> observed_;
};

TEST_F(PlacerPoolsTest, SpotFalseNeverLandsOnASpotPool) {
  // Spot is the cheapest L4 capacity; the workload does not allow it.
  for (int i = 0; i < 2; ++i) {
    Decision d = DecisionFor("{tenant: team, resources: {gpus: 1, gpuModels: [L4]}, durationHint: 1h}");
    ASSERT_EQ(d.outcome, Outcome::kPlaced) << d.reason;
    EXPECT_EQ(d.binding.pool, "l4");
    EXPECT_EQ(d.cost.ToString(), "0.80 EUR");
  }
  Decision spot_only = DecisionFor("{tenant: team, resources: {gpus: 1, gpuModels: [A100-80GB]}, durationHint: 1h}");
  EXPECT_EQ(spot_only.outcome, Outcome::kRejected);
  const ClusterVerdict* v = VerdictOn(spot_only, "spot-only");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->rule, "spot");
  EXPECT_THAT(v->reason, HasSubstr("spot not allowed: pool a100-spot is spot capacity"));
}

TEST_F(PlacerPoolsTest, SpotTrueMayUseSpotAndPaysTheSpotPriceOnlyThere) {
  Decision d =
      DecisionFor("{tenant: team, spot: true, resources: {gpus: 1, gpuModels: [A100-80GB]}, durationHint: 1h}");
  ASSERT_EQ(d.outcome, Outcome::kPlaced) << d.reason;
  EXPECT_EQ(d.binding.pool, "a100-spot");
  EXPECT_EQ(d.cost.ToString(), "0.90 EUR");
  // On an on-demand pool a spot-tolerant workload pays the on-demand price.
  Decision h100 =
      DecisionFor("{tenant: team, spot: true, resources: {gpus: 1, gpuModels: [H100-80GB]}, durationHint: 1h}");
  ASSERT_EQ(h100.outcome, Outcome::kPlaced) << h100.reason;
  EXPECT_EQ(h100.cost.ToString(), "3.60 EUR");
}

TEST_F(PlacerPoolsTest, MaxCostAndBudgetAreJudgedOnThePoolBound) {
  // 1 GPU-hour: l4 0.80 is within 1.00, h100 3.60 is not. Whatever the packer prefers,
  // the binding is on l4 and the chosen verdict shows its price.
  Decision capped = DecisionFor("{tenant: team, resources: {gpus: 1}, durationHint: 1h, maxCost: \"1.00 EUR\"}");
  ASSERT_EQ(capped.outcome, Outcome::kPlaced) << capped.reason;
  EXPECT_EQ(capped.binding.pool, "l4");
  EXPECT_EQ(capped.cost.ToString(), "0.80 EUR");
  const ClusterVerdict* chosen = VerdictOn(capped, "cloud");
  ASSERT_NE(chosen, nullptr);
  EXPECT_EQ(chosen->cost.ToString(), "0.80 EUR");
  // 8 GPUs on one node for an hour fit only the H100 pool (28.80 EUR): over maxCost, so
  // refused. (Spread over nodes, the L4 pool could hold them within it: that queues.)
  Decision over = DecisionFor(
      "{tenant: team, resources: {gpus: 8, topology: same-node}, durationHint: 1h, maxCost: \"10.00 EUR\"}");
  EXPECT_EQ(over.outcome, Outcome::kRejected);
  // The budget (100 EUR) holds 2 H100-hours of 8 GPUs (57.60) but not 4 (115.20): work
  // that fits only the H100 pool waits for the next period; work that fits the L4 pool
  // goes there.
  Decision budget = DecisionFor("{tenant: team, resources: {gpus: 4}, durationHint: 30h}");
  ASSERT_EQ(budget.outcome, Outcome::kPlaced) << budget.reason;
  EXPECT_EQ(budget.binding.pool, "l4");  // 4 x 30 x 0.80 = 96.00; on h100 432.00
  EXPECT_EQ(budget.cost.ToString(), "96.00 EUR");
}

TEST_F(PlacerPoolsTest, MoreThanTheTenantsMaxGpusIsRefusedAtOnce) {
  Decision d = DecisionFor("{tenant: team, resources: {gpus: 16}}");
  EXPECT_EQ(d.outcome, Outcome::kRejected);
  EXPECT_THAT(d.denied_by, ::testing::ElementsAre("tenant-quota"));
  EXPECT_THAT(d.reason, HasSubstr("needs 16 GPUs, more than tenant team's maxGpus of 12"));
}

TEST_F(PlacerPoolsTest, AnOutageIsExplainedAsAnOutage) {
  ObservedCluster down;
  down.healthy = false;
  down.down_reason = "cluster unhealthy since +01:00:00: last error: connection refused";
  observed_["cloud"] = down;
  Decision d = DecisionFor("{tenant: team, resources: {gpus: 1, gpuModels: [L4]}}");
  EXPECT_EQ(d.outcome, Outcome::kQueued);
  const ClusterVerdict* v = VerdictOn(d, "cloud");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->rule, "unhealthy");
  EXPECT_EQ(v->reason, down.down_reason);
  EXPECT_THAT(d.reason, HasSubstr("cloud: cluster unhealthy since +01:00:00"));
}

// A filter hook that allows `cloud` but denies its h100 pool (and names a pool that does
// not exist), and denies every pool of spot-only.
class PoolDenyingHooks : public PolicyHooks {
 public:
  std::vector<HookOutcome> Admit(const nlohmann::json&, double) override { return {}; }
  std::vector<HookOutcome> Filter(const nlohmann::json&, const nlohmann::json& c, double) override {
    HookOutcome o;
    o.policy = "caps";
    if (c["name"] == "cloud") {
      o.denied_pools = {{"h100", "too dear"}, {"nonexistent", "typo"}};
    } else {
      o.denied_pools = {{"a100-spot", "no spot for us"}};
    }
    return {o};
  }
  double Score(const nlohmann::json&, const nlohmann::json&, double, std::vector<std::string>&) override { return 0; }
};

TEST_F(PlacerPoolsTest, AFilterHookMayDenyPoolsOfACluster) {
  PoolDenyingHooks hooks;
  hooks_ = &hooks;
  // 8 GPUs on one node fit only the h100 pool of `cloud`, which the hook denies.
  Decision gang = DecisionFor("{tenant: team, spot: true, resources: {gpus: 8, topology: same-node}}");
  EXPECT_EQ(gang.outcome, Outcome::kRejected);
  const ClusterVerdict* cloud = VerdictOn(gang, "cloud");
  ASSERT_NE(cloud, nullptr);
  EXPECT_EQ(cloud->rule, "caps");
  EXPECT_THAT(cloud->reason, HasSubstr("pool h100: too dear"));
  const ClusterVerdict* spot_only = VerdictOn(gang, "spot-only");
  ASSERT_NE(spot_only, nullptr);
  EXPECT_EQ(spot_only->rule, "caps");
  EXPECT_EQ(spot_only->reason, "pool a100-spot: no spot for us");
  // One GPU fits the L4 pools the hook leaves.
  Decision one = DecisionFor("{tenant: team, resources: {gpus: 1}}");
  ASSERT_EQ(one.outcome, Outcome::kPlaced) << one.reason;
  EXPECT_EQ(one.binding.pool, "l4");
  const ClusterVerdict* verdict = VerdictOn(one, "cloud");
  ASSERT_NE(verdict, nullptr);
  EXPECT_THAT(verdict->warnings,
              ::testing::Contains(HasSubstr("denied pool nonexistent, which cluster cloud does not declare")));
}

}  // namespace
}  // namespace gpufed::placement
