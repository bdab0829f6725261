// Queueing behaviour of the placer: running work, preemption, fair share, guarantees,
// the burst gate, budget caps and alerts. Built with testutil fleets, not YAML, so each
// test states exactly the capacity it depends on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <deque>

#include "controller/placement/fair_share.h"
#include "controller/placement/plan.h"
#include "tests/testutil/fleet_builder.h"

namespace gpufed::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::IsEmpty;

Duration Hours(double h) { return Duration::FromMillis(static_cast<int64_t>(h * 3.6e6)); }

// One on-prem node of 4 GPUs and an elastic cloud that may add 8-GPU nodes.
class QueueingTest : public ::testing::Test {
 protected:
  QueueingTest() {
    config_.clusters.push_back(testutil::MakeCluster("onprem", "onprem", "eu", 1, 4, "A100-80GB", "1.00"));
    model::Cluster cloud = testutil::MakeCluster("cloud", "aws", "eu", 0, 8, "A100-80GB", "3.00");
    cloud.elasticity.max_nodes = 10;
    cloud.elasticity.provision_delay = Duration::FromSeconds(300);
    config_.clusters.push_back(cloud);
    config_.tenants = {testutil::MakeTenant("t0"), testutil::MakeTenant("t1")};
  }
  model::Workload& Add(const std::string& name, const std::string& tenant, int gpus, int priority = 500) {
    workloads_.push_back(testutil::MakeWorkload(name, tenant, gpus));
    workloads_.back().priority = priority;
    return workloads_.back();
  }
  // Marks `w` as running on `cluster`/`node` on GPUs [first, first + gpus).
  RunningWorkload Running(const model::Workload& w, const std::string& cluster, const std::string& node, int first) {
    RunningWorkload r;
    r.workload = &w;
    r.binding.cluster = cluster;
    r.binding.nodes = {node};
    std::vector<int> gpus;
    for (int g = 0; g < w.resources.gpus; ++g) gpus.push_back(first + g);
    r.binding.gpus = {gpus};
    return r;
  }
  void SetBurst(std::optional<Duration> wait, std::optional<int> depth) {
    model::Policy p;
    p.metadata.name = "burst";
    p.burst.queue_wait = wait;
    p.burst.queue_depth = depth;
    config_.policies = {p};
  }
  Plan Run(const std::vector<std::string>& pending, std::vector<RunningWorkload> running = {}) {
    snapshot_.config = &config_;
    snapshot_.pending.clear();
    for (const std::string& name : pending) {
      for (const model::Workload& w : workloads_) {
        if (w.metadata.name == name) snapshot_.pending.push_back(&w);
      }
    }
    snapshot_.running = std::move(running);
    return MakePlan(snapshot_);
  }
  static const Decision& Find(const Plan& plan, const std::string& name) {
    for (const Decision& d : plan.decisions) {
      if (d.workload == name) return d;
    }
    ADD_FAILURE() << "no decision for " << name;
    return plan.decisions.front();
  }

  model::Config config_;
  std::deque<model::Workload> workloads_;  // stable addresses
  Snapshot snapshot_;
};

TEST_F(QueueingTest, RunningWorkReservesItsCapacity) {
  SetBurst(Duration::FromSeconds(600), std::nullopt);
  model::Workload& held = Add("held", "t0", 4);
  Add("w", "t1", 1);
  Plan plan = Run({"w"}, {Running(held, "onprem", "pool-0", 0)});
  EXPECT_EQ(Find(plan, "w").outcome, Outcome::kQueued);
  EXPECT_EQ(Find(plan, "w").verdicts[1].rule, "capacity");  // verdicts in name order: cloud, onprem
  EXPECT_EQ(Find(plan, "w").verdicts[0].rule, "burst");
}

TEST_F(QueueingTest, PreemptsCheckpointableLowerPriorityWorkFirst) {
  model::Workload& a = Add("a-no-ckpt", "t0", 2, 100);
  a.preemptible = true;
  model::Workload& b = Add("b-ckpt", "t0", 2, 100);
  b.preemptible = true;
  b.checkpoint.enabled = true;
  Add("urgent", "t1", 2, 1000);
  SetBurst(Duration::FromSeconds(3600), std::nullopt);
  Plan plan = Run({"urgent"}, {Running(a, "onprem", "pool-0", 0), Running(b, "onprem", "pool-0", 2)});
  const Decision& d = Find(plan, "urgent");
  ASSERT_EQ(d.outcome, Outcome::kPlaced);
  EXPECT_EQ(d.binding.cluster, "onprem");
  ASSERT_EQ(d.preempted.size(), 1u);
  EXPECT_EQ(d.preempted[0].workload, "b-ckpt");
  EXPECT_TRUE(d.preempted[0].checkpointable);
  // Victim (t0) and beneficiary (t1) are of different tenants: each side's reason, which
  // that side's tenant reads, names neither the other workload nor its priority.
  EXPECT_THAT(d.preempted[0].reason, HasSubstr("preempted by a workload of another tenant"));
  EXPECT_THAT(d.preempted[0].reason, Not(HasSubstr("urgent")));
  EXPECT_THAT(d.preempted[0].reason, Not(HasSubstr("1000")));
  EXPECT_THAT(d.reason, HasSubstr("preempts 1 workload of other tenants"));
  EXPECT_THAT(d.reason, Not(HasSubstr("b-ckpt")));
  EXPECT_THAT(d.binding.gpus, ElementsAre(ElementsAre(2, 3)));
}

TEST_F(QueueingTest, APreemptionWithinOneTenantNamesBothSides) {
  model::Workload& b = Add("b-ckpt", "t0", 4, 100);
  b.preemptible = true;
  b.checkpoint.enabled = true;
  Add("urgent", "t0", 4, 1000);
  SetBurst(Duration::FromSeconds(3600), std::nullopt);
  Plan plan = Run({"urgent"}, {Running(b, "onprem", "pool-0", 0)});
  const Decision& d = Find(plan, "urgent");
  ASSERT_EQ(d.outcome, Outcome::kPlaced);
  ASSERT_EQ(d.preempted.size(), 1u);
  EXPECT_THAT(d.preempted[0].reason, HasSubstr("preempted by urgent (priority 1000 > 100)"));
  EXPECT_THAT(d.reason, HasSubstr("preempts b-ckpt"));
}

TEST_F(QueueingTest, ChoosesTheMinimalVictimSet) {
  std::vector<RunningWorkload> running;
  for (int i = 0; i < 4; ++i) {
    model::Workload& v = Add("v" + std::to_string(i), "t0", 1, 100);
    v.preemptible = true;
    running.push_back(Running(v, "onprem", "pool-0", i));
  }
  Add("urgent", "t1", 2, 1000);
  SetBurst(Duration::FromSeconds(3600), std::nullopt);
  const Plan plan_d = Run({"urgent"}, running);
  const Decision& d = Find(plan_d, "urgent");
  ASSERT_EQ(d.outcome, Outcome::kPlaced);
  EXPECT_EQ(d.preempted.size(), 2u);
}

TEST_F(QueueingTest, NeverPreemptsATenantBelowItsGuarantee) {
  config_.tenants[0].guaranteed_gpus = 4;
  model::Workload& v = Add("v", "t0", 4, 100);
  v.preemptible = true;
  Add("urgent", "t1", 2, 1000);
  SetBurst(Duration::FromSeconds(3600), std::nullopt);
  const Plan plan_d = Run({"urgent"}, {Running(v, "onprem", "pool-0", 0)});
  const Decision& d = Find(plan_d, "urgent");
  EXPECT_EQ(d.outcome, Outcome::kQueued);
  EXPECT_THAT(d.preempted, IsEmpty());
}

TEST_F(QueueingTest, NeverPreemptsEqualPriorityNonPreemptibleOrCloudWork) {
  model::Workload& same = Add("same", "t0", 2, 1000);
  same.preemptible = true;
  model::Workload& pinned = Add("pinned", "t0", 2, 100);  // not preemptible
  model::Workload& on_cloud = Add("on-cloud", "t0", 8, 100);
  on_cloud.preemptible = true;
  Add("urgent", "t1", 2, 1000);
  SetBurst(Duration::FromSeconds(3600), std::nullopt);
  Plan plan = Run({"urgent"}, {Running(same, "onprem", "pool-0", 0), Running(pinned, "onprem", "pool-0", 2),
                               Running(on_cloud, "cloud", "pool-0", 0)});
  EXPECT_EQ(Find(plan, "urgent").outcome, Outcome::kQueued);
  EXPECT_THAT(Find(plan, "urgent").preempted, IsEmpty());
}

TEST_F(QueueingTest, RunningCloudWorkStaysAndNewWorkGoesOnPrem) {
  SetBurst(Duration::FromSeconds(600), std::nullopt);
  model::Workload& bursted = Add("bursted", "t0", 2);
  Add("new", "t0", 2);
  Plan plan = Run({"new"}, {Running(bursted, "cloud", "pool-0", 0)});
  ASSERT_EQ(plan.decisions.size(), 1u);  // running work is never re-decided
  EXPECT_EQ(Find(plan, "new").binding.cluster, "onprem");
}

TEST_F(QueueingTest, ElasticNodesOfEarlierPlansAreReusedWithoutDelay) {
  model::Workload& bursted = Add("bursted", "t0", 4);
  Add("fill", "t0", 4);
  Add("next", "t0", 2);
  snapshot_.now = Hours(1);
  SetBurst(Duration::FromSeconds(60), std::nullopt);
  Plan plan = Run({"fill", "next"}, {Running(bursted, "cloud", "pool-3", 0)});
  const Decision& next = Find(plan, "next");
  ASSERT_EQ(next.outcome, Outcome::kPlaced);
  EXPECT_EQ(next.binding.cluster, "cloud");
  EXPECT_THAT(next.binding.nodes, ElementsAre("pool-3"));
  EXPECT_FALSE(next.binding.provisions_node);
  EXPECT_THAT(next.binding.gpus, ElementsAre(ElementsAre(4, 5)));
}

TEST_F(QueueingTest, EachWorkloadWaitsItsOwnThresholdBeforeBursting) {
  SetBurst(Duration::FromSeconds(600), std::nullopt);
  model::Workload& held = Add("held", "t0", 4);
  Add("old", "t0", 4).submitted_at = Duration::FromSeconds(0);
  Add("new", "t1", 1).submitted_at = Duration::FromSeconds(900);
  snapshot_.now = Duration::FromSeconds(900);
  Plan plan = Run({"old", "new"}, {Running(held, "onprem", "pool-0", 0)});
  EXPECT_EQ(Find(plan, "old").binding.cluster, "cloud");  // waited 15m of 10m
  EXPECT_EQ(Find(plan, "new").outcome, Outcome::kQueued);  // just arrived: on-prem may free up
  EXPECT_THAT(Find(plan, "new").reason, HasSubstr("waited 0s of 10m"));
}

TEST_F(QueueingTest, ProvisioningDelayAndTransferTimeAreInReadyAfter) {
  config_.clusters[1].bandwidth_gbps = 8;  // 1 GB/s
  config_.clusters[1].pricing.egress_per_gib = Money(100000, "EUR");  // 0.10 per GiB
  model::Workload& held = Add("held", "t0", 4);
  model::Workload& w = Add("w", "t1", 1);
  w.data.dataset = "corpus";
  w.data.size = Quantity::FromUnits(int64_t{100} << 30);
  const Plan plan_d = Run({"w"}, {Running(held, "onprem", "pool-0", 0)});
  const Decision& d = Find(plan_d, "w");
  ASSERT_EQ(d.binding.cluster, "cloud");
  // 5m provisioning + 100 GiB at 1 GB/s (107.37 s).
  EXPECT_EQ(d.binding.ready_after.millis(), 300000 + 107374);
  EXPECT_EQ(d.cost.ToString(), "13.00 EUR");  // 3.00 GPU-hour + 10.00 egress
}

TEST_F(QueueingTest, LowerDecayedUsageIsServedFirst) {
  Add("a", "t0", 4);
  Add("b", "t1", 4);
  snapshot_.usage["t0"].decayed_gpu_hours = 50;
  snapshot_.usage["t1"].decayed_gpu_hours = 10;
  config_.clusters.pop_back();  // on-prem only: one of them fits
  Plan plan = Run({"a", "b"});
  EXPECT_EQ(plan.decisions[0].workload, "b");
  EXPECT_EQ(Find(plan, "b").outcome, Outcome::kPlaced);
  EXPECT_EQ(Find(plan, "a").outcome, Outcome::kQueued);
}

TEST_F(QueueingTest, WeightsScaleTheShare) {
  Add("a", "t0", 4);
  Add("b", "t1", 4);
  snapshot_.usage["t0"].decayed_gpu_hours = 50;
  snapshot_.usage["t1"].decayed_gpu_hours = 30;
  config_.tenants[0].weight = 2;  // 25 per unit of weight against 30
  config_.clusters.pop_back();
  EXPECT_EQ(Run({"a", "b"}).decisions[0].workload, "a");
}

TEST_F(QueueingTest, TenantUnderItsGuaranteeGoesFirst) {
  Add("a", "t0", 4);
  Add("b", "t1", 4);
  snapshot_.usage["t0"].decayed_gpu_hours = 0;
  snapshot_.usage["t1"].decayed_gpu_hours = 100;
  config_.tenants[1].guaranteed_gpus = 2;
  config_.clusters.pop_back();
  EXPECT_EQ(Run({"a", "b"}).decisions[0].workload, "b");
}

TEST_F(QueueingTest, BudgetAlertsAppearInTheDecisionStream) {
  model::Tenant& t = config_.tenants[0];
  t.budget.limit = Money(100 * Money::kMicrosPerUnit, "EUR");
  t.budget.alert_at = {0.5, 0.9};
  Add("w1", "t0", 4).duration_hint = Hours(10);  // 40.00 EUR
  Add("w2", "t0", 4).duration_hint = Hours(3);   // on-prem is full: 36.00 EUR on the cloud
  Plan plan = Run({"w1", "w2"});
  ASSERT_EQ(Find(plan, "w1").outcome, Outcome::kPlaced);
  EXPECT_THAT(Find(plan, "w1").alerts, IsEmpty());
  ASSERT_EQ(Find(plan, "w2").outcome, Outcome::kPlaced);  // 76.00 of 100
  ASSERT_EQ(Find(plan, "w2").alerts.size(), 1u);
  EXPECT_EQ(Find(plan, "w2").alerts[0].level, 0.5);
  EXPECT_THAT(Find(plan, "w2").alerts[0].message, HasSubstr("reaches 50% of its budget: 76.00 EUR of 100.00 EUR"));
  ASSERT_EQ(plan.alerts.size(), 1u);
}

TEST_F(QueueingTest, WorkOverTheBudgetQueuesWithItsReason) {
  model::Tenant& t = config_.tenants[0];
  t.budget.limit = Money(100 * Money::kMicrosPerUnit, "EUR");
  t.budget.spent = Money(90 * Money::kMicrosPerUnit, "EUR");
  Add("huge", "t0", 4).duration_hint = Hours(30);   // 120.00 on-prem: more than the whole budget
  Add("medium", "t0", 4).duration_hint = Hours(5);  // 20.00: fits next period
  Plan plan = Run({"huge", "medium"});
  EXPECT_EQ(Find(plan, "huge").outcome, Outcome::kQueued);
  EXPECT_THAT(Find(plan, "huge").reason, HasSubstr("costs more than the whole limit"));
  EXPECT_EQ(Find(plan, "medium").outcome, Outcome::kQueued);
  EXPECT_THAT(Find(plan, "medium").reason, HasSubstr("tenant budget exhausted"));
}

TEST_F(QueueingTest, CloudBudgetKeepsWorkOnPrem) {
  config_.tenants[0].budget.cloud_limit = Money(5 * Money::kMicrosPerUnit, "EUR");
  model::Workload& held = Add("held", "t1", 4);
  Add("w", "t0", 2);  // 6.00 EUR on the cloud
  const Plan plan_d = Run({"w"}, {Running(held, "onprem", "pool-0", 0)});
  const Decision& d = Find(plan_d, "w");
  EXPECT_EQ(d.outcome, Outcome::kQueued);
  EXPECT_EQ(d.verdicts[0].rule, "tenant-budget");
  EXPECT_THAT(d.verdicts[0].reason, HasSubstr("exceeds the cloud budget left"));
}

TEST(FairShareLedger, DecaysByHalfEveryHalfLife) {
  FairShareLedger ledger(Hours(10));
  ledger.Hold("t", 2000);  // 2 GPUs
  ledger.Advance(Hours(10));
  const double window = DecayedWindowHours(Hours(10));  // 10 / ln 2
  EXPECT_NEAR(ledger.DecayedGpuHours("t"), 2 * window * 0.5, 1e-9);
  ledger.Hold("t", 0);
  ledger.Advance(Hours(20));
  EXPECT_NEAR(ledger.DecayedGpuHours("t"), 2 * window * 0.25, 1e-9);
  EXPECT_EQ(ledger.DecayedGpuHours("absent"), 0);
}

TEST(FairShareLedger, RestoredStateContinuesAsIfNeverStopped) {
  FairShareLedger kept(Hours(5)), restarted(Hours(5));
  kept.Hold("t", 3000);
  kept.Advance(Hours(4));
  restarted.Restore(kept.State());
  restarted.Hold("t", 3000);  // the caller sets holdings again from what runs
  EXPECT_NEAR(restarted.DecayedGpuHours("t"), kept.DecayedGpuHours("t"), 1e-12);
  kept.Advance(Hours(9));
  restarted.Advance(Hours(9));
  EXPECT_NEAR(restarted.DecayedGpuHours("t"), kept.DecayedGpuHours("t"), 1e-9);
  EXPECT_EQ(restarted.State().last.millis(), Hours(9).millis());
}

TEST(FairShareLedger, StepsDoNotChangeTheIntegral) {
  FairShareLedger one(Hours(5)), many(Hours(5));
  one.Hold("t", 1000);
  many.Hold("t", 1000);
  one.Advance(Hours(7));
  for (int i = 1; i <= 70; ++i) many.Advance(Hours(0.1 * i));
  EXPECT_NEAR(one.DecayedGpuHours("t"), many.DecayedGpuHours("t"), 1e-9);
}

}  // namespace
}  // namespace gpufed::placement
