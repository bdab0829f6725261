#include "connectors/sim/sim_cluster.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "connectors/core/ledger.h"
#include "connectors/sim/sim_connector.h"

namespace gpufed::connectors::sim {
namespace {

Duration Min(int m) { return Duration::FromSeconds(m * 60); }

model::Cluster TestCluster(int max_nodes = 0) {
  model::Cluster c;
  c.metadata.name = "c";
  model::NodePool pool;
  pool.name = "gpu";
  pool.count = 1;
  pool.gpu.model = "A100";
  pool.gpu.count = 4;
  pool.gpu.memory = Quantity::FromMilli(int64_t{80} << 40);
  c.node_pools.push_back(pool);
  c.elasticity.max_nodes = max_nodes;
  c.elasticity.provision_delay = Min(5);
  c.elasticity.idle_timeout = Min(10);
  c.pricing.currency = "EUR";
  c.pricing.gpu_hour["A100"] = Money(2000000, "EUR");
  return c;
}

Action Submit(const std::string& key, std::vector<int> gpus, Duration duration, std::string node = "gpu-0") {
  Action a;
  a.key = key;
  a.workload = key;
  a.nodes = {{node, gpus}};
  a.duration = duration;
  if (node.empty()) a.provision_pool = "gpu";
  return a;
}

const ObservedWorkload* Find(const Observation& o, const std::string& key) {
  for (const auto& w : o.workloads) {
    if (w.key == key) return &w;
  }
  return nullptr;
}

TEST(SimCluster, RunsAJobForItsDurationAndMetersIt) {
  SimCluster sim(TestCluster(), {});
  ASSERT_TRUE(sim.Submit(Submit("a", {0, 1}, Min(60))).ok());
  sim.AdvanceTo(Min(30));
  Observation o = sim.Observe();
  EXPECT_EQ(Find(o, "a")->state, RunState::kRunning);
  EXPECT_EQ(o.nodes[0].gpus[0].free_milli, 0);
  EXPECT_EQ(o.next_event, Min(60));
  sim.AdvanceTo(Min(90));
  o = sim.Observe();
  EXPECT_EQ(Find(o, "a")->state, RunState::kSucceeded);
  EXPECT_DOUBLE_EQ(Find(o, "a")->gpu_seconds, 2 * 3600.0);
  EXPECT_EQ(Find(o, "a")->cost, Money(4000000, "EUR"));  // 2 GPUs x 1h x 2 EUR
  EXPECT_EQ(o.nodes[0].gpus[0].free_milli, 1000);
}

TEST(SimCluster, ReportsAFinishedJobForTheRetentionWindowThenForgetsIt) {
  SimCluster sim(TestCluster(), {});
  ASSERT_TRUE(sim.Submit(Submit("j1", {0}, Min(10))).ok());
  ASSERT_TRUE(sim.Submit(Submit("j2", {1}, Min(600))).ok());
  sim.AdvanceTo(Duration::FromMillis((Min(10) + SimCluster::kFinishedRetention).millis() - 1));
  ASSERT_NE(Find(sim.Observe(), "j1"), nullptr);  // still reported as succeeded
  EXPECT_EQ(Find(sim.Observe(), "j1")->state, RunState::kSucceeded);
  sim.AdvanceTo(Min(10) + SimCluster::kFinishedRetention);
  Observation later = sim.Observe();
  EXPECT_EQ(Find(later, "j1"), nullptr);  // forgotten: observing does not grow with history
  ASSERT_NE(Find(later, "j2"), nullptr);  // the running job stays
  EXPECT_EQ(later.workloads.size(), 1u);
  // A late cancel of the forgotten job is a no-op, as for any finished job; an unknown
  // key is still an error.
  Action stop;
  stop.key = "j1";
  EXPECT_TRUE(sim.Stop(stop, RunState::kCancelled).ok());
  stop.key = "never";
  EXPECT_EQ(sim.Stop(stop, RunState::kCancelled).code(), StatusCode::kNotFound);
}

TEST(SimCluster, RefusesBusyGpus) {
  SimCluster sim(TestCluster(), {});
  ASSERT_TRUE(sim.Submit(Submit("a", {0}, Min(60))).ok());
  EXPECT_EQ(sim.Submit(Submit("b", {0}, Min(60))).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(sim.Submit(Submit("c", {0}, Min(60), "nope-0")).code(), StatusCode::kFailedPrecondition);
}

TEST(SimCluster, CheckpointsAtItsIntervalAndResumesFromThem) {
  SimCluster sim(TestCluster(), {});
  Action a = Submit("a", {0}, Min(120));
  a.checkpoint_interval = Min(20);
  a.resume_from = Min(40);
  ASSERT_TRUE(sim.Submit(a).ok());
  sim.AdvanceTo(Min(50));
  Observation o = sim.Observe();
  const ObservedWorkload* w = Find(o, "a");
  EXPECT_EQ(w->progress, Min(90));
  EXPECT_EQ(w->checkpoint, Min(80));
  sim.AdvanceTo(Min(81));
  EXPECT_EQ(Find(sim.Observe(), "a")->state, RunState::kSucceeded);  // 80 min left after resuming at 40
}

TEST(SimCluster, ProvisionsElasticNodesAfterTheDelayAndRemovesIdleOnes) {
  SimCluster sim(TestCluster(3), {});
  ASSERT_TRUE(sim.Submit(Submit("a", {0, 1, 2, 3}, Min(30), "")).ok());
  Observation o = sim.Observe();
  ASSERT_EQ(o.nodes.size(), 2u);
  EXPECT_FALSE(o.nodes[1].ready);
  EXPECT_EQ(Find(o, "a")->state, RunState::kStarting);
  sim.AdvanceTo(Min(5));
  EXPECT_EQ(Find(sim.Observe(), "a")->state, RunState::kRunning);
  sim.AdvanceTo(Min(36));
  EXPECT_EQ(sim.Observe().nodes.size(), 2u);  // idle, but not for 10 minutes yet
  sim.AdvanceTo(Min(46));
  EXPECT_EQ(sim.Observe().nodes.size(), 1u);
}

TEST(SimCluster, AnOutageKillsJobsAndHidesTheCluster) {
  SimCluster sim(TestCluster(), {{"c", FailureType::kOutage, "", Min(10), Min(20)}});
  ASSERT_TRUE(sim.Submit(Submit("a", {0}, Min(60))).ok());
  sim.AdvanceTo(Min(15));
  EXPECT_TRUE(sim.down());
  sim.AdvanceTo(Min(20));
  EXPECT_FALSE(sim.down());
  Observation o = sim.Observe();
  const ObservedWorkload* w = Find(o, "a");
  EXPECT_EQ(w->state, RunState::kFailed);
  EXPECT_TRUE(w->lost);
}

TEST(SimCluster, NodeLossAndSpotReclaimEndJobsOnThatNode) {
  model::Cluster c = TestCluster();
  c.node_pools[0].count = 2;
  SimCluster sim(c, {{"c", FailureType::kNodeLoss, "gpu-0", Min(10)}, {"c", FailureType::kSpotReclaim, "gpu-1", Min(12)}});
  ASSERT_TRUE(sim.Submit(Submit("a", {0}, Min(60), "gpu-0")).ok());
  ASSERT_TRUE(sim.Submit(Submit("b", {0}, Min(60), "gpu-1")).ok());
  sim.AdvanceTo(Min(15));
  Observation o = sim.Observe();
  EXPECT_EQ(Find(o, "a")->state, RunState::kFailed);
  EXPECT_EQ(Find(o, "b")->state, RunState::kPreempted);
  EXPECT_TRUE(o.nodes.empty());
}

TEST(SimConnector, DeduplicatesKeysAndRebuildsFromItsLedger) {
  std::string dir = ::testing::TempDir() + "/sim_connector_ledger";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ManualClock clock;
  CallContext ctx{&clock};
  {
    auto ledger = ActionLedger::Open(dir + "/ledger.log");
    SimConnector sim(TestCluster(), {}, std::move(ledger).value());
    ASSERT_FALSE(sim.Apply(Submit("a", {0}, Min(60)), ctx)->already_applied);
    clock.AdvanceTo(Min(10));
    EXPECT_TRUE(sim.Apply(Submit("a", {0}, Min(60)), ctx)->already_applied);
    EXPECT_EQ(sim.duplicates_suppressed(), 1);
  }
  clock.AdvanceTo(Min(30));
  auto ledger = ActionLedger::Open(dir + "/ledger.log");
  SimConnector again(TestCluster(), {}, std::move(ledger).value());
  Result<Observation> o = again.Observe(ctx);
  ASSERT_TRUE(o.ok());
  ASSERT_NE(Find(*o, "a"), nullptr);
  EXPECT_EQ(Find(*o, "a")->progress, Min(30));
  EXPECT_TRUE(again.Apply(Submit("a", {0}, Min(60)), ctx)->already_applied);
}

}  // namespace
}  // namespace gpufed::connectors::sim
