#include "connectors/local/local_connector.h"

#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "connectors/local/local_test_fixture.h"

namespace gpufed::connectors::local {
namespace {

using testing::Fixture;

TEST(LocalConnector, RunsTheCommandWithItsGpusAndReportsTheExitStatus) {
  Fixture f("exit");
  auto c = f.Make();
  ASSERT_NE(c, nullptr);
  CallContext ctx{&f.clock};
  ASSERT_TRUE(c->Apply(f.Job("ok.a1", {"sh", "-c", "echo gpus=$FAKE_GPUS/$GPUFED_GPUS"}), ctx).ok());
  ASSERT_TRUE(c->Apply(f.Job("bad.a1", {"sh", "-c", "exit 3"}), ctx).ok());
  ASSERT_TRUE(c->Apply(f.Job("missing.a1", {"no-such-command-gpufed"}), ctx).ok());
  EXPECT_EQ(f.WaitFinished(*c, "ok.a1").state, RunState::kSucceeded);
  ObservedWorkload bad = f.WaitFinished(*c, "bad.a1");
  EXPECT_EQ(bad.state, RunState::kFailed);
  EXPECT_EQ(bad.reason, "exit status 3");
  EXPECT_FALSE(bad.lost);
  EXPECT_EQ(f.WaitFinished(*c, "missing.a1").reason, "exit status 127");
  EXPECT_EQ(f.Output("ok.a1"), "gpus=1/1\n");
}

TEST(LocalConnector, DoesNotStartAKeyTwice) {
  Fixture f("dup");
  // A folder the job user may write, outside the state folder, to count the runs.
  const std::string shared = f.dir + "/shared";
  std::filesystem::create_directories(shared);
  ::chmod(shared.c_str(), 0777);
  auto c = f.Make();
  ASSERT_NE(c, nullptr);
  CallContext ctx{&f.clock};
  Action a = f.Job("once.a1", {"sh", "-c", "echo run >> \"$SHARED/runs\""});
  a.run.env["SHARED"] = shared;
  EXPECT_FALSE(c->Apply(a, ctx)->already_applied);
  EXPECT_TRUE(c->Apply(a, ctx)->already_applied);
  f.WaitFinished(*c, "once.a1");
  auto again = f.Make();  // after a restart too
  c.reset();
  EXPECT_TRUE(again->Apply(a, ctx)->already_applied);
  EXPECT_EQ(Fixture::Slurp(shared + "/runs"), "run\n");
}

TEST(LocalConnector, CancelsWithSigtermThenSigkillAfterTheGracePeriod) {
  Fixture f("cancel");
  auto c = f.Make();
  ASSERT_NE(c, nullptr);
  CallContext ctx{&f.clock};
  ASSERT_TRUE(c->Apply(f.Job("soft.a1", {"sleep", "30"}), ctx).ok());
  ASSERT_TRUE(c->Apply(f.Job("stubborn.a1", {"sh", "-c", "trap '' TERM; touch ready; sleep 30 & wait; sleep 30"}), ctx)
                  .ok());
  ASSERT_TRUE(Fixture::WaitForFile(f.JobDir("stubborn.a1") + "/ready"));  // the trap is set
  Action cancel = f.Job("soft.a1", {});
  cancel.kind = ActionKind::kCancel;
  ASSERT_TRUE(c->Apply(cancel, ctx).ok());
  cancel.key = "stubborn.a1";
  ASSERT_TRUE(c->Apply(cancel, ctx).ok());
  ObservedWorkload soft = f.WaitFinished(*c, "soft.a1");
  EXPECT_EQ(soft.state, RunState::kCancelled);
  EXPECT_EQ(soft.reason, "terminated");
  ObservedWorkload stubborn = f.WaitFinished(*c, "stubborn.a1");
  EXPECT_EQ(stubborn.state, RunState::kCancelled);
  EXPECT_EQ(stubborn.reason, "killed after the grace period");
}

// A finished job leaves nothing running: what its command started in the background
// goes with it (it would hold GPUs the connector already reported free).
TEST(LocalConnector, EndsWhatTheCommandLeftInItsProcessGroup) {
  Fixture f("leftovers");
  auto c = f.Make();
  ASSERT_NE(c, nullptr);
  CallContext ctx{&f.clock};
  ASSERT_TRUE(c->Apply(f.Job("bg.a1", {"sh", "-c", "sleep 60 & echo $! > child; exit 0"}), ctx).ok());
  EXPECT_EQ(f.WaitFinished(*c, "bg.a1").state, RunState::kSucceeded);
  const int child = std::stoi(Fixture::Slurp(f.JobDir("bg.a1") + "/child"));
  ASSERT_GT(child, 0);
  bool gone = false;
  for (int i = 0; i < 1000 && !gone; ++i) {  // bounded: the kill was sent before the wrapper exited
    std::string stat = Fixture::Slurp("/proc/" + std::to_string(child) + "/stat");
    gone = stat.empty() || stat.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the background sleep outlived its job";
}

TEST(LocalConnector, ReadoptsRunningJobsAndReportsVanishedOnesAfterARestart) {
  Fixture f("restart");
  CallContext ctx{&f.clock};
  {
    auto c = f.Make();
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->Apply(f.Job("keeps.a1", {"sleep", "0.5"}), ctx).ok());
    ASSERT_TRUE(c->Apply(f.Job("dies.a1", {"sleep", "30"}), ctx).ok());
  }
  // While "the controller is down", one job is killed from outside.
  const int pid = std::atoi(Fixture::Slurp(f.Book("dies.a1") + "/pid").c_str());
  ASSERT_GT(pid, 0);
  ::kill(-pid, SIGKILL);
  auto c = f.Make();
  ASSERT_NE(c, nullptr);
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
    auto c = f.registry.Create(f.cluster, {&before, f.connector, {}});
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ASSERT_TRUE((*c)->Apply(f.Job("short.a1", {"true"}), {&before}).ok());
  }
  ASSERT_TRUE(Fixture::WaitForFile(f.Book("short.a1") + "/exit"));
  // The wrapper writes the exit file just before it exits: reap it, so the restarted
  // connector finds it gone rather than racing its last instruction.
  const int pid = std::atoi(Fixture::Slurp(f.Book("short.a1") + "/pid").c_str());
  ASSERT_GT(pid, 0);
  const pid_t reaped = ::waitpid(pid, nullptr, 0);
  ASSERT_TRUE(reaped == pid || (reaped < 0 && errno == ECHILD));  // ECHILD: the first connector reaped it
  ManualClock an_hour_later(wall_now + Duration::FromSeconds(3600));
  auto c = f.registry.Create(f.cluster, {&an_hour_later, f.connector, {}});
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

// A launch the controller recorded but whose process it never recorded (it stopped in
// between) is reported lost, and not launched a second time.
TEST(LocalConnector, AnInterruptedLaunchIsLostNotRepeated) {
  Fixture f("interrupted");
  CallContext ctx{&f.clock};
  {
    auto c = f.Make();
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->Apply(f.Job("half.a1", {"true"}), ctx).ok());
    f.WaitFinished(*c, "half.a1");
  }
  // As if the controller had stopped right after the fork: only the marker is left.
  std::filesystem::remove(f.Book("half.a1") + "/process");
  std::filesystem::remove(f.Book("half.a1") + "/pid");
  std::filesystem::remove(f.Book("half.a1") + "/exit");
  const auto output_before = std::filesystem::last_write_time(f.JobDir("half.a1"));
  auto c = f.Make();
  ASSERT_NE(c, nullptr);
  ObservedWorkload w = f.WaitFinished(*c, "half.a1");
  EXPECT_EQ(w.state, RunState::kFailed);
  EXPECT_TRUE(w.lost);
  EXPECT_FALSE(std::filesystem::exists(f.Book("half.a1") + "/pid")) << "launched again";
  EXPECT_EQ(std::filesystem::last_write_time(f.JobDir("half.a1")), output_before);
}

TEST(LocalConnector, RefusesAWorkloadWithoutACommand) {
  Fixture f("nocmd");
  auto c = f.Make();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->Apply(f.Job("x.a1", {}), {&f.clock}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpufed::connectors::local
