#include "controller/placement/snapshot_builder.h"

#include <gtest/gtest.h>

namespace gpufed::placement {
namespace {

Money Eur(int64_t euros) { return Money(euros * 1'000'000, "EUR"); }

model::Config TwoTenantsOneCluster() {
  model::Config config;
  model::Tenant nlp;
  nlp.metadata.name = "nlp";
  nlp.budget.spent = Eur(5);
  model::Tenant vision;
  vision.metadata.name = "vision";
  config.tenants = {nlp, vision};
  model::Cluster onprem;
  onprem.metadata.name = "onprem";
  config.clusters = {onprem};
  return config;
}

TEST(BuildSnapshot, EveryDeclaredTenantHasItsSpendAndFairShare) {
  model::Config config = TwoTenantsOneCluster();
  FairShareLedger ledger(Duration::FromSeconds(3600));
  ledger.Hold("vision", 2000);
  ledger.Advance(Duration::FromSeconds(3600));
  model::Workload w;
  SnapshotFacts facts;
  facts.config = &config;
  facts.now = Duration::FromSeconds(3600);
  facts.pending = {&w};
  facts.metered = {{"nlp", Eur(10), Eur(10), Duration::FromSeconds(60)}};
  facts.estimates = {{"ghost", Eur(1), Money()}};  // a tenant the revision no longer declares
  facts.fair_share = &ledger;
  facts.onprem_queue_depth = 3;
  Snapshot s = BuildSnapshot(std::move(facts));
  EXPECT_EQ(s.config, &config);
  ASSERT_EQ(s.pending.size(), 1u);
  EXPECT_EQ(s.pending[0], &w);
  EXPECT_EQ(s.onprem_queue_depth, 3);
  EXPECT_EQ(s.fair_share_half_life, Duration::FromSeconds(3600));
  ASSERT_EQ(s.usage.size(), 3u);
  EXPECT_EQ(s.usage["nlp"].spent.ToString(), Eur(15).ToString());  // declared 5 + metered 10
  EXPECT_EQ(s.usage["nlp"].cloud_spent.ToString(), Eur(10).ToString());
  EXPECT_EQ(s.usage["vision"].spent.ToString(), Money().ToString());
  EXPECT_GT(s.usage["vision"].decayed_gpu_hours, 0);
  EXPECT_EQ(s.usage["vision"].decayed_gpu_hours, ledger.DecayedGpuHours("vision"));
  EXPECT_EQ(s.usage["ghost"].spent.ToString(), Eur(1).ToString());
}

TEST(BuildSnapshot, PlansOnlyOnDeclaredClusters) {
  model::Config config = TwoTenantsOneCluster();
  SnapshotFacts facts;
  facts.config = &config;
  facts.observed["onprem"].healthy = false;
  facts.observed["removed"].healthy = true;  // a report of a cluster the revision removed
  Snapshot s = BuildSnapshot(std::move(facts));
  ASSERT_EQ(s.observed.size(), 1u);
  EXPECT_FALSE(s.observed.at("onprem").healthy);
}

TEST(BuildSnapshot, RecordedUsageIsTakenAsItIs) {
  model::Config config = TwoTenantsOneCluster();
  SnapshotFacts facts;
  facts.config = &config;
  std::map<std::string, TenantUsage> recorded;
  recorded["nlp"] = TenantUsage{0, Eur(50), Eur(2), 1.5};
  facts.recorded_usage = recorded;
  facts.metered = {{"nlp", Eur(10), Money(), Duration()}};  // ignored: the journal's usage wins
  facts.fair_share_half_life = Duration::FromSeconds(7200);
  Snapshot s = BuildSnapshot(std::move(facts));
  ASSERT_EQ(s.usage.size(), 1u);  // no declared tenant added: replay plans on what was read
  EXPECT_EQ(s.usage["nlp"].spent.ToString(), Eur(50).ToString());
  EXPECT_EQ(s.usage["nlp"].decayed_gpu_hours, 1.5);
  EXPECT_EQ(s.fair_share_half_life, Duration::FromSeconds(7200));
}

}  // namespace
}  // namespace gpufed::placement
