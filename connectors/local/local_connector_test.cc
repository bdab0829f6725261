#include "connectors/local/local_connector.h"

#include <sys/wait.h>

#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace gpufed::connectors::local {
namespace {

struct Fixture {
  std::string dir;
  model::Cluster cluster;
  ConnectorRegistry registry;
  SystemClock clock;

  explicit Fixture(const std::string& name) {
    dir = ::testing::TempDir() + "/local_connector_" + name;
    std::filesystem::remove_all(dir);
    cluster.metadata.name = "laptop";
    cluster.connector.type = model::ConnectorType::kLocal;
    cluster.connector.qps = 0;  // the tests poll faster than the default limit
    cluster.metadata.annotations["local.gpufed.io/gpu-env"] = "FAKE_GPUS";
    cluster.metadata.annotations["local.gpufed.io/grace"] = "200ms";
    model::NodePool pool;
    pool.name = "box";
    pool.count = 1;
    pool.gpu.model = "fake";
    pool.gpu.count = 2;
    cluster.node_pools.push_back(pool);
    EXPECT_TRUE(RegisterLocalConnector(registry).ok());
  }
  std::unique_ptr<Connector> Make() {
    auto c = registry.Create(cluster, {&clock, dir, {}});
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return std::move(c).value();
  }
  Action Job(const std::string& key, std::vector<std::string> command) {
    Action a;
    a.key = key;
    a.workload = key;
    a.nodes = {{"box-0", {1}}};
    a.run.command = std::move(command);
    return a;
  }
  // Polls until the job reaches a finished state (at most ~10 s).
  ObservedWorkload WaitFinished(Connector& c, const std::string& key) {
    for (int i = 0; i < 1000; ++i) {
      Result<Observation> o = c.Observe({&clock});
      if (!o.ok()) continue;
      for (const auto& w : o->workloads) {
        if (w.key == key && IsFinished(w.state)) return w;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << key << " never finished";
    return {};
  }
};

TEST(LocalConnector, RunsTheCommandWithItsGpusAndReportsTheExitStatus) {
  Fixture f("exit");
  auto c = f.Make();
  CallContext ctx{&f.clock};
  ASSERT_TRUE(c->Apply(f.Job("ok.a1", {"sh", "-c", "echo gpus=$FAKE_GPUS/$GPUFED_GPUS"}), ctx).ok());
  ASSERT_TRUE(c->Apply(f.Job("bad.a1", {"sh", "-c", "exit 3"}), ctx).ok());
  EXPECT_EQ(f.WaitFinished(*c, "ok.a1").state, RunState::kSucceeded);
  ObservedWorkload bad = f.WaitFinished(*c, "bad.a1");
  EXPECT_EQ(bad.state, RunState::kFailed);
  EXPECT_EQ(bad.reason, "exit status 3");
  EXPECT_FALSE(bad.lost);
  std::ifstream log(f.dir + "/jobs/ok.a1/log");
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line, "gpus=1/1");
}

TEST(LocalConnector, DoesNotStartAKeyTwice) {
  Fixture f("dup");
  auto c = f.Make();
  CallContext ctx{&f.clock};
  Action a = f.Job("once.a1", {"sh", "-c", "echo run >> \"$GPUFED_JOB_DIR/../../runs\""});
  EXPECT_FALSE(c->Apply(a, ctx)->already_applied);
  EXPECT_TRUE(c->Apply(a, ctx)->already_applied);
  f.WaitFinished(*c, "once.a1");
  auto again = f.Make();  // after a restart too
  c.reset();
  EXPECT_TRUE(again->Apply(a, ctx)->already_applied);
  std::ifstream runs(f.dir + "/runs");
  std::string all((std::istreambuf_iterator<char>(runs)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all, "run\n");
}

TEST(LocalConnector, CancelsWithSigtermThenSigkillAfterTheGracePeriod) {
  Fixture f("cancel");
  auto c = f.Make();
  CallContext ctx{&f.clock};
  ASSERT_TRUE(c->Apply(f.Job("soft.a1", {"sleep", "30"}), ctx).ok());
  ASSERT_TRUE(c->Apply(f.Job("stubborn.a1", {"sh", "-c", "trap '' TERM; sleep 30 & wait; sleep 30"}), ctx).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  Action cancel = f.Job("soft.a1", {});
  cancel.kind = ActionKind::kCancel;
  ASSERT_TRUE(c->Apply(cancel, ctx).ok());
  cancel.key = "stubborn.a1";
  ASSERT_TRUE(c->Apply(cancel, ctx).ok());
  ObservedWorkload soft = f.WaitFinished(*c, "soft.a1");
  EXPECT_EQ(soft.state, RunState::kCancelled);
  ObservedWorkload stubborn = f.WaitFinished(*c, "stubborn.a1");
  EXPECT_EQ(stubborn.state, RunState::kCancelled);
  EXPECT_EQ(stubborn.reason, "killed after the grace period");
}

TEST(LocalConnector, ReadoptsRunningJobsAndReportsVanishedOnesAfterARestart) {
  Fixture f("restart");
  CallContext ctx{&f.clock};
  {
    auto c = f.Make();
    ASSERT_TRUE(c->Apply(f.Job("keeps.a1", {"sleep", "0.5"}), ctx).ok());
    ASSERT_TRUE(c->Apply(f.Job("dies.a1", {"sleep", "30"}), ctx).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // While "the controller is down", one job is killed from outside.
  std::ifstream pid_file(f.dir + "/jobs/dies.a1/pid");
  int pid = 0;
  pid_file >> pid;
  ASSERT_GT(pid, 0);
  ::kill(-pid, SIGKILL);
  auto c = f.Make();
  EXPECT_EQ(f.WaitFinished(*c, "keeps.a1").state, RunState::kSucceeded);
  ObservedWorkload dies = f.WaitFinished(*c, "dies.a1");
  EXPECT_EQ(dies.state, RunState::kFailed);
  EXPECT_TRUE(dies.lost);
}

// Metering of an attempt that ran while no controller did: the restarted connector reports
// the job's own start (kept in its folder) and the time it ended, not the restart.
TEST(LocalConnector, AJobThatEndedWhileTheControllerWasDownKeepsItsTrueTimes) {
  Fixture f("downtime");
  const Duration wall_now = Duration::FromMillis(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                     std::chrono::system_clock::now().time_since_epoch())
                                                     .count());
  ManualClock before(wall_now);
  {
    auto c = f.registry.Create(f.cluster, {&before, f.dir, {}});
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE((*c)->Apply(f.Job("short.a1", {"true"}), {&before}).ok());
  }
  for (int i = 0; i < 1000 && !std::filesystem::exists(f.dir + "/jobs/short.a1/exit"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // bounded: the job ends by itself
  }
  ASSERT_TRUE(std::filesystem::exists(f.dir + "/jobs/short.a1/exit"));
  // The wrapper writes the exit file just before it exits: reap it, so the restarted
  // connector finds it gone rather than racing its last instruction.
  std::ifstream pid_file(f.dir + "/jobs/short.a1/pid");
  int pid = 0;
  pid_file >> pid;
  ASSERT_GT(pid, 0);
  const pid_t reaped = ::waitpid(pid, nullptr, 0);
  ASSERT_TRUE(reaped == pid || (reaped < 0 && errno == ECHILD));  // ECHILD: the first connector reaped it
  ManualClock an_hour_later(wall_now + Duration::FromSeconds(3600));
  auto c = f.registry.Create(f.cluster, {&an_hour_later, f.dir, {}});
  ASSERT_TRUE(c.ok());
  Result<Observation> o = (*c)->Observe({&an_hour_later});
  ASSERT_TRUE(o.ok());
  ASSERT_EQ(o->workloads.size(), 1u);
  const ObservedWorkload& w = o->workloads[0];
  EXPECT_EQ(w.state, RunState::kSucceeded);
  EXPECT_EQ(w.started_at, wall_now);
  EXPECT_GE(w.finished_at, w.started_at);
  EXPECT_LT(w.finished_at.millis() - w.started_at.millis(), 60'000) << "ended at the restart, not when it ended";
  EXPECT_LT(w.gpu_seconds, 60);
}

TEST(LocalConnector, RefusesAWorkloadWithoutACommand) {
  Fixture f("nocmd");
  auto c = f.Make();
  EXPECT_EQ(c->Apply(f.Job("x.a1", {}), {&f.clock}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpufed::connectors::local
