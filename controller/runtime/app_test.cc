// The App `gpufed run` is, stepped on a test clock: it starts and stops in its documented
// order; the quickstart's scenario is a workload source (its submissions arrive at their
// submittedAt, none twice across a restart) and the sim connectors get its failures; the
// reconcile loop sees neither. Read-only, it changes nothing and runs no pass.
#include "controller/runtime/app.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "connectors/sim/sim_connector.h"
#include "connectors/slurm/slurm_connector.h"
#include "controller/audit/testing/test_journal.h"

namespace gpufed::runtime {
namespace {

const std::string kRepo = std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart";

struct Session {
  gpufed::ManualClock clock;
  connectors::ConnectorRegistry registry;
  std::unique_ptr<App> rt;

  Status Open(const std::string& state) {
    Status s = connectors::sim::RegisterSimConnector(registry);
    if (!s.ok() && s.code() != StatusCode::kAlreadyExists) return s;
    AppOptions o;
    o.config_dir = kRepo;  // its simulation/scenario.yaml is the default scenario
    o.state_dir = state;
    o.clock = &clock;
    o.handle_signals = false;
    Result<std::unique_ptr<App>> opened = App::Open(o, registry, nullptr);
    if (!opened.ok()) return opened.status();
    rt = std::move(opened).value();
    return Status::Ok();
  }
  // Steps until `until` (virtual), jumping to each next event.
  void StepUntil(Duration until) {
    while (clock.Now() < until) {
      ASSERT_TRUE(rt->Step().ok());
      Duration next = rt->NextEvent();
      clock.AdvanceTo(next.millis() == 0 || next > until ? until : next);
    }
  }
  int Scenario() {
    int n = 0;
    Result<std::vector<store::WorkloadRecord>> all = rt->controller().List("");
    EXPECT_TRUE(all.ok());
    for (const auto& r : *all) n += r.source == kScenarioSource;
    return n;
  }
};

TEST(App, PlaysTheScenarioAsAWorkloadSourceAndResumesWithoutResubmitting) {
  const std::string state = ::testing::TempDir() + "/gpufed_runtime_scenario";
  std::filesystem::remove_all(state);
  int submitted_by_1h = 0;
  {
    Session run;
    ASSERT_TRUE(run.Open(state).ok());
    EXPECT_EQ(run.rt->scenario_file(), kRepo + "/simulation/scenario.yaml");
    EXPECT_FALSE(run.rt->Idle());  // submissions are still to come
    ASSERT_NO_FATAL_FAILURE(run.StepUntil(Duration::FromSeconds(3600)));
    submitted_by_1h = run.Scenario();
    ASSERT_TRUE(run.rt->Stop("test").ok());
  }
  Session again;
  again.clock.AdvanceTo(Duration::FromSeconds(3600));
  ASSERT_TRUE(again.Open(state).ok());
  EXPECT_EQ(again.Scenario(), submitted_by_1h);  // nothing submitted twice
  ASSERT_NO_FATAL_FAILURE(again.StepUntil(Duration::FromSeconds(int64_t{48} * 3600)));
  EXPECT_GT(again.Scenario(), submitted_by_1h);  // the rest arrived after the restart
  EXPECT_TRUE(again.rt->Idle() || again.rt->Stuck());
  // The scenario's EU outage reached the sim connector: work there was lost and requeued.
  int lost = 0;
  Result<std::vector<store::AttemptRow>> attempts = again.rt->controller().store()->Attempts();
  ASSERT_TRUE(attempts.ok());
  for (const auto& a : *attempts) lost += a.outcome == "lost";
  EXPECT_GE(lost, 1);
  ASSERT_TRUE(again.rt->Stop("test").ok());
}

// What a decision row says for "the same decision" (reconciler_plan.cc's Signature): its
// outcome and each cluster's verdict, without the reason text.
std::string VerdictsOf(const store::DecisionRow& row) {
  nlohmann::json j = nlohmann::json::parse(row.record_json, nullptr, false);
  std::string out = row.outcome;
  if (!j.is_object() || !j.contains("verdicts")) return out;
  for (const nlohmann::json& v : j["verdicts"]) {
    out += "|" + v.value("cluster", "") + ":" + (v.value("eligible", false) ? "e" : "-") +
           (v.value("fitsNow", false) ? "f" : "-") + v.value("rule", "");
  }
  return out;
}

// A restart's first pass (and a new leader's, on a shared store) journals a queued
// workload's decision only when it differs from the one journalled last, which the
// workload's row keeps (schema 11). Before, every queued decision was journalled again:
// a whole queue's records per takeover, and seconds of a new leader's failover.
TEST(App, ARestartJournalsAQueuedDecisionAgainOnlyWhenItChanged) {
  const std::string state = ::testing::TempDir() + "/gpufed_app_restart_queue";
  std::filesystem::remove_all(state);
  const Duration stop = Duration::FromSeconds(3600);
  std::map<std::string, int64_t> queued_before;  // uid -> its newest decision's seq
  {
    Session run;
    ASSERT_TRUE(run.Open(state).ok());
    ASSERT_NO_FATAL_FAILURE(run.StepUntil(stop));
    Result<std::vector<store::WorkloadRecord>> all = run.rt->controller().List("");
    ASSERT_TRUE(all.ok());
    for (const store::WorkloadRecord& r : *all) {
      if (r.state != store::WorkloadState::kQueued) continue;
      Result<std::vector<store::DecisionRow>> rows = run.rt->controller().store()->Decisions(r.tenant, r.name, 1);
      ASSERT_TRUE(rows.ok() && !rows->empty()) << r.uid;
      EXPECT_FALSE(r.decision_signature.empty()) << r.uid << ": a queued row without its decision's digest";
      queued_before[r.uid] = rows->front().seq;
    }
    ASSERT_TRUE(run.rt->Stop("test").ok());
  }
  ASSERT_GE(queued_before.size(), 3u) << "the quickstart's first hour queues work";
  Session again;
  again.clock.AdvanceTo(stop);
  ASSERT_TRUE(again.Open(state).ok());
  ASSERT_TRUE(again.rt->Step().ok());
  Result<std::vector<store::DecisionRow>> rows = again.rt->controller().store()->Decisions("", "");
  ASSERT_TRUE(rows.ok());
  // Per attempt, oldest first: no queued decision repeats the one before it.
  std::map<std::pair<std::string, int>, std::vector<const store::DecisionRow*>> by_attempt;
  for (auto it = rows->rbegin(); it != rows->rend(); ++it) by_attempt[{it->uid, it->attempt}].push_back(&*it);
  for (const auto& [attempt, decisions] : by_attempt) {
    for (size_t i = 1; i < decisions.size(); ++i) {
      if (decisions[i]->outcome != "queued") continue;
      EXPECT_NE(VerdictsOf(*decisions[i]), VerdictsOf(*decisions[i - 1]))
          << attempt.first << " attempt " << attempt.second << ": decision " << decisions[i]->seq
          << " repeats the one before it";
    }
  }
  // And the restart did decide: the work still queued kept its decision unless it changed.
  size_t kept = 0;
  Result<std::vector<store::WorkloadRecord>> after = again.rt->controller().List("");
  ASSERT_TRUE(after.ok());
  for (const store::WorkloadRecord& r : *after) {
    auto before = queued_before.find(r.uid);
    if (before == queued_before.end() || r.state != store::WorkloadState::kQueued) continue;
    Result<std::vector<store::DecisionRow>> newest = again.rt->controller().store()->Decisions(r.tenant, r.name, 1);
    ASSERT_TRUE(newest.ok() && !newest->empty());
    kept += newest->front().seq == before->second;
  }
  EXPECT_GE(kept, 1u) << "every queued workload was journalled again after the restart";
  ASSERT_TRUE(again.rt->Stop("test").ok());
}

// --unsafe-no-fsync is for simulations: a repository with a real cluster is refused
// before anything is opened or contacted.
TEST(App, RefusesUnsyncedStorageForARepositoryWithRealClusters) {
  const std::string state = ::testing::TempDir() + "/gpufed_runtime_unsynced";
  std::filesystem::remove_all(state);
  connectors::ConnectorRegistry registry;
  ASSERT_TRUE(connectors::sim::RegisterSimConnector(registry).ok());
  ASSERT_TRUE(connectors::slurm::RegisterSlurmConnector(registry).ok());  // its Clusters' blocks are checked
  AppOptions o;
  o.config_dir = std::string(GPUFED_SOURCE_DIR) + "/examples/slurm-burst";
  o.state_dir = state;
  o.handle_signals = false;
  o.durability = Durability::kUnsynced;
  Result<std::unique_ptr<App>> opened = App::Open(o, registry, nullptr);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(opened.status().message().find("only for federations of simulated clusters"), std::string::npos)
      << opened.status().message();
  EXPECT_FALSE(std::filesystem::exists(state + "/gpufed.db"));
}

// The journal shows the order: the trail opens after the revision and the store, the
// loop and its passes come after controller-start and policy-activated, and Stop closes
// with controller-stop and a final checkpoint, once, however often it is called.
TEST(App, StartsInItsDocumentedOrderAndStopsOnceInReverse) {
  const std::string state = ::testing::TempDir() + "/gpufed_app_order";
  std::filesystem::remove_all(state);
  Session run;
  ASSERT_TRUE(run.Open(state).ok());
  ASSERT_NO_FATAL_FAILURE(run.StepUntil(Duration::FromSeconds(600)));
  ASSERT_TRUE(run.rt->Stop("test").ok());
  ASSERT_TRUE(run.rt->Stop("again").ok());  // idempotent: nothing more is written
  Result<reconcile::PassStats> after = run.rt->controller().Pass();
  EXPECT_EQ(after.status().code(), StatusCode::kFailedPrecondition);
  const std::vector<std::string> kinds = audit::testing::JournalKinds(state + "/audit");
  // Every commit ends with its checkpoint (sign-ahead); the order is of the other records.
  std::vector<std::string> records;
  std::copy_if(kinds.begin(), kinds.end(), std::back_inserter(records),
               [](const std::string& kind) { return kind != "checkpoint"; });
  ASSERT_GE(records.size(), 3u);
  EXPECT_EQ(records[0], "controller-start");
  EXPECT_EQ(records[1], "policy-activated");
  EXPECT_EQ(records.back(), "controller-stop");
  EXPECT_EQ(kinds[kinds.size() - 2], "controller-stop");
  EXPECT_EQ(kinds.back(), "checkpoint");
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "controller-stop"), 1);
  EXPECT_GT(std::count(kinds.begin(), kinds.end(), "decision"), 0);
}

// The scenario is checked before the audit trail opens: a bad one stops the start with
// the file and line, and the journal holds no controller-start without its stop.
TEST(App, ABadScenarioStopsTheStartBeforeAnythingIsJournalled) {
  const std::string dir = ::testing::TempDir() + "/gpufed_app_bad_scenario";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/scenario.yaml")
      << "submissions: [missing.yaml]\nfailures:\n  - {cluster: eu-cloud, type: meteor, at: 1h}\n";
  connectors::ConnectorRegistry registry;
  ASSERT_TRUE(connectors::sim::RegisterSimConnector(registry).ok());
  AppOptions o;
  o.config_dir = kRepo;
  o.state_dir = dir + "/state";
  o.scenario = dir + "/scenario.yaml";
  o.handle_signals = false;
  Result<std::unique_ptr<App>> opened = App::Open(o, registry, nullptr);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("scenario.yaml"), std::string::npos) << opened.status().message();
  EXPECT_TRUE(audit::testing::JournalKinds(dir + "/state/audit").empty());
}

// `plan --state`'s App: a folder without a store is NotFound and left as it was; over a
// stopped controller's state it plans but runs no pass and no reload.
TEST(App, ReadOnlyRunsNoPassAndMakesNothing) {
  const std::string state = ::testing::TempDir() + "/gpufed_app_read_only";
  std::filesystem::remove_all(state);
  connectors::ConnectorRegistry registry;
  ASSERT_TRUE(connectors::sim::RegisterSimConnector(registry).ok());
  AppOptions o;
  o.config_dir = kRepo;
  o.state_dir = state;
  auto prepare = [&registry] {
    policy::Candidate candidate = policy::PrepareRevision({kRepo}, &registry);
    EXPECT_NE(candidate.revision, nullptr);
    return std::move(candidate.revision);
  };
  Result<std::unique_ptr<App>> missing = App::OpenReadOnly(o, registry, prepare());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(state));
  {
    Session run;
    ASSERT_TRUE(run.Open(state).ok());
    ASSERT_NO_FATAL_FAILURE(run.StepUntil(Duration::FromSeconds(600)));
    ASSERT_TRUE(run.rt->Stop("test").ok());
  }
  const size_t journalled = audit::testing::JournalKinds(state + "/audit").size();
  Result<std::unique_ptr<App>> app = App::OpenReadOnly(o, registry, prepare());
  ASSERT_TRUE(app.ok()) << app.status().ToString();
  Result<placement::Plan> plan = (*app)->controller().Preview();
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ((*app)->controller().Pass().status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*app)->controller().Reload().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE((*app)->Stop("nothing to close").ok());
  EXPECT_EQ(audit::testing::JournalKinds(state + "/audit").size(), journalled);
}

}  // namespace
}  // namespace gpufed::runtime
