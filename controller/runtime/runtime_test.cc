// The runtime `gpufed run` is, stepped on a test clock: the quickstart's scenario is a
// workload source (its submissions arrive at their submittedAt, none twice across a
// restart) and the sim connectors get its failures; the reconcile loop sees neither.
#include "controller/runtime/runtime.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "connectors/sim/sim_connector.h"

namespace gpufed::runtime {
namespace {

const std::string kRepo = std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart";

struct Session {
  gpufed::ManualClock clock;
  connectors::ConnectorRegistry registry;
  std::unique_ptr<Runtime> rt;

  Status Open(const std::string& state) {
    Status s = connectors::sim::RegisterSimConnector(registry);
    if (!s.ok() && s.code() != StatusCode::kAlreadyExists) return s;
    RuntimeOptions o;
    o.config_dir = kRepo;  // its simulation/scenario.yaml is the default scenario
    o.state_dir = state;
    o.clock = &clock;
    o.handle_signals = false;
    Result<std::unique_ptr<Runtime>> opened = Runtime::Open(o, registry, nullptr);
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

TEST(Runtime, PlaysTheScenarioAsAWorkloadSourceAndResumesWithoutResubmitting) {
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
  ASSERT_NO_FATAL_FAILURE(again.StepUntil(Duration::FromSeconds(48 * 3600)));
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

// --unsafe-no-fsync is for simulations: a repository with a real cluster is refused
// before anything is opened or contacted.
TEST(Runtime, RefusesUnsyncedStorageForARepositoryWithRealClusters) {
  const std::string state = ::testing::TempDir() + "/gpufed_runtime_unsynced";
  std::filesystem::remove_all(state);
  connectors::ConnectorRegistry registry;
  ASSERT_TRUE(connectors::sim::RegisterSimConnector(registry).ok());
  RuntimeOptions o;
  o.config_dir = std::string(GPUFED_SOURCE_DIR) + "/examples/slurm-burst";
  o.state_dir = state;
  o.handle_signals = false;
  o.durability = Durability::kUnsynced;
  Result<std::unique_ptr<Runtime>> opened = Runtime::Open(o, registry, nullptr);
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(opened.status().message().find("only for federations of simulated clusters"), std::string::npos)
      << opened.status().message();
  EXPECT_FALSE(std::filesystem::exists(state + "/gpufed.db"));
}

}  // namespace
}  // namespace gpufed::runtime
