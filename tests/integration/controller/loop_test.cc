// The whole loop on sim clusters in virtual time: bursting, outage and requeue from a
// checkpoint, preemption, budget exhaustion, policy revisions changing mid-run.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {
namespace {

using store::WorkloadState;

TEST(ControllerLoop, BurstsToTheCloudOnceTheOnpremQueueBuildsUp) {
  std::string dir = FreshDir("burst");
  std::ofstream(dir + "/repo/work.yaml") << WorkloadYaml("a", "alpha", 8, "2h") << "---\n"
                                         << WorkloadYaml("b", "alpha", 8, "2h") << "---\n"
                                         << WorkloadYaml("c", "alpha", 8, "2h") << "---\n"
                                         << WorkloadYaml("d", "alpha", 8, "2h");
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  ASSERT_TRUE(h.RunUntilIdle().ok());
  int onprem = 0, cloud = 0;
  for (const char* name : {"a", "b", "c", "d"}) {
    store::WorkloadRecord r = h.Get(name);
    EXPECT_EQ(r.state, WorkloadState::kSucceeded) << name << ": " << r.reason;
    Result<std::vector<store::DecisionRow>> d = h.controller->Decisions({"", name}, "");
    for (const auto& row : *d) {
      if (row.outcome == "placed") (row.cluster == "onprem" ? onprem : cloud)++;
    }
  }
  EXPECT_EQ(onprem + cloud, 4);
  EXPECT_GE(cloud, 2);  // one node on-prem: the queue passes the threshold
  EXPECT_GE(onprem, 1);
}

TEST(ControllerLoop, RequeuesCheckpointableWorkFromItsCheckpointWhenAClusterIsLost) {
  std::string dir = FreshDir("outage");
  std::ofstream(dir + "/scenario.yaml") << "failures:\n  - {cluster: cloud, type: outage, at: 50m, until: 5h}\n";
  std::string ckpt = "  checkpoint: {enabled: true, interval: 15m, uri: s3://x}\n";
  std::ofstream(dir + "/repo/work.yaml") << WorkloadYaml("big", "alpha", 8, "4h") << "---\n"
                                         << WorkloadYaml("x1", "alpha", 8, "2h", ckpt) << "---\n"
                                         << WorkloadYaml("x2", "alpha", 8, "2h", ckpt) << "---\n"
                                         << WorkloadYaml("x3", "alpha", 8, "2h", ckpt);
  Harness h;
  ASSERT_TRUE(h.Open(dir, dir + "/scenario.yaml").ok());
  ASSERT_TRUE(h.RunUntilIdle().ok());
  int requeued = 0;
  for (const char* name : {"x1", "x2", "x3"}) {
    store::WorkloadRecord r = h.Get(name);
    EXPECT_EQ(r.state, WorkloadState::kSucceeded) << name << ": " << r.reason;
    if (r.attempt > 1) {
      ++requeued;
      EXPECT_GT(r.resume_from.millis(), 0) << name;  // resumed from a checkpoint, not from zero
      auto history = h.Ctl().store()->History(r.uid);
      Duration requeued_at;
      for (const auto& t : *history) {
        if (t.to == "Requeued" && t.reason.find("has not answered") != std::string::npos) requeued_at = t.at;
      }
      EXPECT_GT(requeued_at.millis(), 0) << name;
      // Attempt 1 is metered from the cluster's record (it died with the outage at 50m),
      // once the cloud answered again: not up to when gpufed gave up on it (lostAfter later).
      bool metered = false;
      Result<std::vector<store::AttemptRow>> attempts = h.Ctl().store()->Attempts();
      ASSERT_TRUE(attempts.ok());
      for (const store::AttemptRow& a : *attempts) {
        if (a.uid != r.uid || a.attempt != 1) continue;
        metered = true;
        EXPECT_EQ(a.outcome, "lost") << name;
        EXPECT_GT(a.gpu_seconds, 0) << name;
        EXPECT_LE(a.finished.millis() + Duration::FromSeconds(600).millis(), requeued_at.millis()) << name;
      }
      EXPECT_TRUE(metered) << name;
    }
  }
  EXPECT_GE(requeued, 1);
}

TEST(ControllerLoop, PreemptsLowerPriorityPreemptibleWorkForUrgentWork) {
  std::string dir = FreshDir("preempt");
  // kFleet caps alpha at normal; urgent work needs the repository to allow it (a declared
  // cap binds admins too, config/priority_cap.h).
  std::string fleet = kFleet;
  const std::string cap = "  maxPriority: normal\n";
  fleet.replace(fleet.find(cap), cap.size(), "  maxPriority: urgent\n");
  std::ofstream(dir + "/repo/fleet.yaml") << fleet;
  std::ofstream(dir + "/repo/work.yaml") << WorkloadYaml(
      "sweep", "alpha", 8, "6h",
      "  priority: low\n  preemptible: true\n  data: {sensitivity: restricted}\n"
      "  checkpoint: {enabled: true, interval: 10m, uri: s3://s}\n");
  std::ofstream(dir + "/urgent.yaml") << WorkloadYaml("urgent", "alpha", 8, "1h",
                                                      "  priority: urgent\n  data: {sensitivity: restricted}\n");
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(h.controller->Pass().ok());
    h.Step();
  }
  ASSERT_EQ(h.Get("sweep").state, WorkloadState::kRunning);
  std::ifstream in(dir + "/urgent.yaml");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(h.controller->Submit(text, "urgent.yaml", By("")).ok());
  ASSERT_TRUE(h.RunUntilIdle().ok());
  EXPECT_EQ(h.Get("urgent").state, WorkloadState::kSucceeded);
  store::WorkloadRecord sweep = h.Get("sweep");
  EXPECT_EQ(sweep.state, WorkloadState::kSucceeded);
  EXPECT_EQ(sweep.attempt, 2);
  EXPECT_GT(sweep.resume_from.millis(), 0);
  auto decisions = h.controller->Decisions({"", "sweep"}, "");
  bool preempted = false;
  for (const auto& d : *decisions) preempted |= d.outcome == "preempted";
  EXPECT_TRUE(preempted);
}

// The loop keeps each API workload's parsed spec while it is unfinished; a controller that
// has run hundreds keeps no more than twice its live work (plus 64).
TEST(ControllerLoop, ParsedSpecsOfFinishedWorkloadsAreDropped) {
  std::string dir = FreshDir("spec_cache");
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  constexpr int kWorkloads = 200;
  for (int i = 0; i < kWorkloads; ++i) {
    const std::string name = "s" + std::to_string(i);
    ASSERT_TRUE(h.controller->Submit(WorkloadYaml(name, "alpha", 1, "1m"), name + ".yaml", By("")).ok()) << name;
  }
  size_t most = 0, last = 0;
  for (int pass = 0; pass < 2000; ++pass) {
    Result<reconcile::PassStats> stats = h.controller->Pass();
    ASSERT_TRUE(stats.ok()) << stats.status().ToString();
    most = std::max(most, stats->specs_cached);
    last = stats->specs_cached;
    if (h.controller->Idle()) break;
    h.Step();
  }
  ASSERT_TRUE(h.controller->Idle());
  EXPECT_GE(most, size_t{kWorkloads}) << "every waiting workload's spec is kept while it waits";
  EXPECT_LE(last, size_t{64}) << "the specs of finished workloads were kept";
}

TEST(ControllerLoop, QueuesWorkPastTheTenantsBudgetAndStopsAsStuck) {
  std::string dir = FreshDir("budget");
  std::ofstream(dir + "/repo/work.yaml") << WorkloadYaml("cheap", "beta", 1, "1h") << "---\n"
                                         << WorkloadYaml("pricey", "beta", 8, "10h");
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  ASSERT_TRUE(h.RunUntilIdle().ok());
  EXPECT_EQ(h.Get("cheap").state, WorkloadState::kSucceeded);
  store::WorkloadRecord pricey = h.Get("pricey");
  EXPECT_EQ(pricey.state, WorkloadState::kQueued);
  EXPECT_NE(pricey.reason.find("budget"), std::string::npos) << pricey.reason;
  EXPECT_TRUE(h.controller->Stuck());
}

TEST(ControllerLoop, ActivatesANewRevisionMidRunAndKeepsTheOldOneWhenTheNextIsBad) {
  std::string dir = FreshDir("revisions");
  std::ofstream(dir + "/repo/work.yaml") << WorkloadYaml("long", "alpha", 4, "3h");
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  std::string first = h.controller->active_revision();
  ASSERT_TRUE(h.controller->Pass().ok());
  // A new rule: training on the cloud is denied.
  std::ofstream(dir + "/repo/extra.yaml")
      << "apiVersion: gpufed/v1alpha1\nkind: Policy\nmetadata: {name: onprem-only}\nspec:\n  enforcement: deny\n"
         "  rules:\n    - name: no-cloud-training\n      when: {type: training}\n      require: {cluster.provider: "
         "onprem}\n";
  ASSERT_TRUE(h.controller->Reload().ok());
  std::string second = h.controller->active_revision();
  EXPECT_NE(first, second);
  // A broken revision is rejected; the second keeps serving.
  std::ofstream(dir + "/repo/broken.yaml") << "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: [x}\n";
  Status bad = h.controller->Reload();
  EXPECT_EQ(bad.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(h.controller->active_revision(), second);
  // Under the second revision a new submission bursts nowhere: cloud is denied by the rule.
  ASSERT_TRUE(h.controller->Submit(WorkloadYaml("late", "alpha", 8, "1h"), "late.yaml", By("")).ok());
  ASSERT_TRUE(h.controller->Pass().ok());
  Result<nlohmann::json> why = h.controller->Explain({"", "late"}, "");
  ASSERT_TRUE(why.ok());
  EXPECT_NE(why->dump().find("no-cloud-training"), std::string::npos) << why->dump(2);
  ASSERT_TRUE(h.RunUntilIdle().ok());
  EXPECT_EQ(h.Get("long").state, WorkloadState::kSucceeded);
  EXPECT_EQ(h.Get("late").state, WorkloadState::kSucceeded);
  EXPECT_EQ(h.Get("late").cluster, "onprem");
}

TEST(ControllerLoop, RunsTheQuickstartScenarioToIdle) {
  std::string dir = FreshDir("quickstart");
  Harness h;
  const std::string repo = std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart";
  Status opened = h.OpenRuntime(repo, dir + "/state", repo + "/simulation/scenario.yaml");
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  ASSERT_TRUE(h.RunUntilIdle().ok());
  auto attempts = h.Ctl().store()->Attempts();
  int lost = 0, preempted = 0, cloud = 0;
  for (const auto& a : *attempts) {
    lost += a.outcome == "lost";
    preempted += a.outcome == "preempted";
    cloud += a.cloud;
  }
  EXPECT_GE(lost, 1);
  EXPECT_GE(preempted, 1);
  EXPECT_GE(cloud, 5);
  auto all = h.Ctl().List("");
  int succeeded = 0;
  for (const auto& r : *all) succeeded += r.state == WorkloadState::kSucceeded;
  EXPECT_GE(succeeded, 35);
}

// The jobs a pass sees start (or finish) are stored in a few commits, not one fsync each:
// 600 jobs placed in one pass all start before the next, which commits their Running
// states in slices; then all of them end, and their ends and bookings commit the same way.
TEST(ControllerLoop, APassStoresTheStatesItObservesInSlicesNotOneCommitEach) {
  std::string dir = FreshDir("sync_slices");
  std::ofstream(dir + "/repo/fleet.yaml") << R"(apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: big}
spec:
  provider: onprem
  region: eu-central
  zone: eu
  connector: {type: sim, qps: 10000, burst: 1000}
  nodePools:
    - {name: gpu, count: 80, gpu: {model: A100-80GB, count: 8, memory: 80Gi}}
  pricing: {currency: EUR, gpuHour: {A100-80GB: "1.00"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: alpha}
spec: {weight: 1}
)";
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  constexpr int kJobs = 600;
  for (int i = 0; i < kJobs; ++i) {
    const std::string name = "j" + std::to_string(i);
    ASSERT_TRUE(h.controller->Submit(WorkloadYaml(name, "alpha", 1, "1h"), name + ".yaml", By("")).ok()) << name;
  }
  store::Store& store = *h.Ctl().store();
  auto count = [&](WorkloadState state) {
    Result<std::vector<store::WorkloadRecord>> all = store.ListUnfinished();
    return all.ok() ? std::count_if(all->begin(), all->end(), [&](const auto& r) { return r.state == state; }) : -1;
  };
  ASSERT_TRUE(h.controller->Pass().ok());
  ASSERT_EQ(count(WorkloadState::kPlaced), kJobs);
  h.clock.AdvanceTo(h.clock.Now() + Duration::FromSeconds(600));  // every job has started by now
  const int64_t commits_before = store.commits();
  ASSERT_TRUE(h.controller->Pass().ok());
  EXPECT_EQ(count(WorkloadState::kRunning), kJobs);
  // 600 Running states: three slices of at most 256, plus the few writes of any pass.
  EXPECT_LE(store.commits() - commits_before, 8);
  store::WorkloadRecord last = h.Get("j599");
  Result<std::vector<store::Transition>> history = store.History(last.uid);
  ASSERT_TRUE(history.ok());
  ASSERT_FALSE(history->empty());
  EXPECT_EQ(history->back().to, "Running");

  // They all end before the next pass: 600 ends, 600 attempts booked, in as few commits.
  h.clock.AdvanceTo(h.clock.Now() + Duration::FromSeconds(3600));  // within the retention of finished jobs
  const int64_t commits_at_end = store.commits();
  ASSERT_TRUE(h.controller->Pass().ok());
  EXPECT_EQ(store.ListUnfinished()->size(), 0u);
  EXPECT_LE(store.commits() - commits_at_end, 12);
  Result<std::vector<store::AttemptRow>> attempts = store.Attempts();
  ASSERT_TRUE(attempts.ok());
  EXPECT_EQ(attempts->size(), static_cast<size_t>(kJobs));
}

}  // namespace
}  // namespace gpufed::testing
