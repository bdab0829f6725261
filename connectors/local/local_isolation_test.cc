// gpufed issue 42: a tenant's workload on a `local` cluster never runs as the controller.
// Each test plays the hostile tenant: the command, run.env and run.workingDir are the
// tenant's, the rest is the controller's.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "connectors/local/job_process.h"
#include "connectors/local/local_test_fixture.h"

namespace gpufed::connectors::local {
namespace {

using testing::Fixture;

constexpr uid_t kNobody = 65534;

#define REQUIRE_ROOT() \
  if (::geteuid() != 0) GTEST_SKIP() << "switching users needs root; the suite runs as root in CI"

std::set<std::string> Lines(const std::string& text) {
  std::set<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.insert(line);
  return out;
}

// A process of the test's own that a hostile job would like the controller to kill.
struct Victim {
  pid_t pid = ::fork();
  Victim() {
    if (pid == 0) {
      ::execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  bool Alive() const { return ::waitpid(pid, nullptr, WNOHANG) == 0; }
  ~Victim() {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
};

TEST(LocalIsolation, AJobCannotReadTheStateFolderTheControllersEnvironmentOrItsFiles) {
  REQUIRE_ROOT();
  Fixture f("hostile");
  { std::ofstream(f.state + "/admin.token") << "admin-token-canary\n"; }
  ::chmod((f.state + "/admin.token").c_str(), 0600);
  { std::ofstream(f.state + "/gpufed.db") << "store-canary\n"; }
  ::chmod((f.state + "/gpufed.db").c_str(), 0644);  // as SQLite creates it: the folder must protect it
  ::setenv("GPUFED_TEST_CANARY", "environment-canary", 1);
  // A descriptor the controller holds open without O_CLOEXEC must not reach the job.
  const int leaked = ::open((f.state + "/gpufed.db").c_str(), O_RDONLY);
  ASSERT_GE(leaked, 0);
  auto c = f.Make();
  ASSERT_NE(c, nullptr);
  Action a = f.Job("hostile.a1", {"sh", "-c",
                                  "cat \"$STATE/admin.token\" && echo READ-TOKEN;"
                                  "cat \"$STATE/gpufed.db\" && echo READ-STORE;"
                                  "ls \"$STATE\" && echo LISTED-STATE;"
                                  "ls \"$GPUFED_JOB_DIR/../../state\" && echo LISTED-RELATIVE;"
                                  "cat /proc/$PPID/environ && echo READ-WRAPPER-ENV;"
                                  "ls \"$BOOK\" && echo LISTED-BOOKKEEPING;"
                                  "for fd in /proc/$$/fd/*; do readlink \"$fd\"; done;"
                                  "env; echo uid=$(id -u) gid=$(id -g) groups=$(id -G)"});
  a.run.env["STATE"] = f.state;
  a.run.env["BOOK"] = f.Book("hostile.a1");
  ASSERT_TRUE(c->Apply(a, {&f.clock}).ok());
  f.WaitFinished(*c, "hostile.a1");
  ::close(leaked);
  ::unsetenv("GPUFED_TEST_CANARY");
  const std::string out = f.Output("hostile.a1");
  for (const char* leak : {"READ-TOKEN", "READ-STORE", "LISTED-STATE", "LISTED-RELATIVE", "READ-WRAPPER-ENV",
                           "LISTED-BOOKKEEPING", "admin-token-canary", "store-canary", "environment-canary"}) {
    EXPECT_EQ(out.find(leak), std::string::npos) << leak << " reached the job:\n" << out;
  }
  EXPECT_EQ(Lines(out).count(f.state + "/gpufed.db"), 0u) << "the controller's open descriptor reached the job";
  EXPECT_NE(out.find("uid=65534 gid=65534 groups=65534"), std::string::npos) << out;
}

TEST(LocalIsolation, TheJobGetsItsUserItsDeclaredEnvironmentAndItsOwnFolder) {
  REQUIRE_ROOT();
  Fixture f("identity");
  auto c = f.Make();
  ASSERT_NE(c, nullptr);
  Action a = f.Job("env.a1", {"env"});
  a.run.env["DATASET"] = "imagenet";
  a.run.env["FAKE_GPUS"] = "0,1";     // cannot widen its GPUs
  a.run.env["GPUFED_JOB_DIR"] = "/";  // nor move its folder
  ASSERT_TRUE(c->Apply(a, {&f.clock}).ok());
  EXPECT_EQ(f.WaitFinished(*c, "env.a1").state, RunState::kSucceeded);
  EXPECT_EQ(Lines(f.Output("env.a1")),
            (std::set<std::string>{"DATASET=imagenet", "FAKE_GPUS=1", "GPUFED_ATTEMPT=1", "GPUFED_GPUS=1",
                                   "GPUFED_JOB_DIR=" + f.JobDir("env.a1"), "GPUFED_WORKLOAD=env.a1",
                                   "HOME=/nonexistent", "PATH=/usr/local/bin:/usr/bin:/bin"}));
  struct stat job {}, book {};
  ASSERT_EQ(::stat(f.JobDir("env.a1").c_str(), &job), 0);
  EXPECT_EQ(job.st_uid, kNobody);
  EXPECT_EQ(job.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat(f.Book("env.a1").c_str(), &book), 0);
  EXPECT_EQ(book.st_uid, 0u);
  EXPECT_EQ(book.st_mode & 07777, 0700u);

  Action where = f.Job("where.a1", {"sh", "-c", "pwd; id -u"});
  where.run.working_dir = "data/run1";
  ASSERT_TRUE(c->Apply(where, {&f.clock}).ok());
  EXPECT_EQ(f.WaitFinished(*c, "where.a1").state, RunState::kSucceeded);
  EXPECT_EQ(f.Output("where.a1"), f.JobDir("where.a1") + "/data/run1\n65534\n");
}

TEST(LocalIsolation, AWorkingDirOutsideTheJobsFolderIsRefused) {
  Fixture f("workdir");
  auto c = f.Make();
  ASSERT_NE(c, nullptr);
  for (const std::string& dir : std::vector<std::string>{"../../state", "data/../../..", "/etc", f.state}) {
    Action a = f.Job("w.a1", {"true"});
    a.run.working_dir = dir;
    Result<ApplyOutcome> r = c->Apply(a, {&f.clock});
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << dir;
  }
  Action inside = f.Job("in.a1", {"pwd"});
  inside.run.working_dir = f.JobDir("in.a1") + "/out";
  ASSERT_TRUE(c->Apply(inside, {&f.clock}).ok());
  EXPECT_EQ(f.WaitFinished(*c, "in.a1").state, RunState::kSucceeded);
  EXPECT_EQ(f.Output("in.a1"), f.JobDir("in.a1") + "/out\n");
}

TEST(LocalIsolation, AFakePidFileCannotMakeTheControllerSignalAnotherProcess) {
  REQUIRE_ROOT();
  Fixture f("fakepid");
  Victim victim;
  ASSERT_GT(victim.pid, 0);
  CallContext ctx{&f.clock};
  auto hostile = [&](const std::string& key) {
    Action a = f.Job(key, {"sh", "-c",
                           "echo $VICTIM > \"$GPUFED_JOB_DIR/pid\"; echo $VICTIM > \"$BOOK/pid\";"
                           "echo \"$VICTIM 1 x\" > \"$BOOK/process\"; touch ready; exec sleep 30"});
    a.run.env["VICTIM"] = std::to_string(victim.pid);
    a.run.env["BOOK"] = f.Book(key);
    return a;
  };
  Action cancel = f.Job("", {});
  cancel.kind = ActionKind::kCancel;
  {
    auto c = f.Make();
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->Apply(hostile("now.a1"), ctx).ok());
    ASSERT_TRUE(c->Apply(hostile("later.a1"), ctx).ok());
    ASSERT_TRUE(Fixture::WaitForFile(f.JobDir("now.a1") + "/ready"));
    ASSERT_TRUE(Fixture::WaitForFile(f.JobDir("later.a1") + "/ready"));
    cancel.key = "now.a1";
    ASSERT_TRUE(c->Apply(cancel, ctx).ok());
    EXPECT_EQ(f.WaitFinished(*c, "now.a1").state, RunState::kCancelled);
    EXPECT_TRUE(victim.Alive());
  }
  EXPECT_NE(Fixture::Slurp(f.Book("later.a1") + "/pid"), std::to_string(victim.pid) + "\n");
  auto c = f.Make();  // after a restart, the connector re-adopts the job by what it recorded
  ASSERT_NE(c, nullptr);
  cancel.key = "later.a1";
  ASSERT_TRUE(c->Apply(cancel, ctx).ok());
  EXPECT_EQ(f.WaitFinished(*c, "later.a1").state, RunState::kCancelled);
  EXPECT_TRUE(victim.Alive());
}

// After a restart the recorded pid may have been reused by another process: the
// connector checks its start time and signals nothing it cannot verify.
TEST(LocalIsolation, NeverSignalsARecycledPid) {
  Fixture f("recycled");
  Victim victim;
  CallContext ctx{&f.clock};
  int wrapper = 0;
  {
    auto c = f.Make();
    ASSERT_NE(c, nullptr);
    ASSERT_TRUE(c->Apply(f.Job("job.a1", {"sleep", "30"}), ctx).ok());
    wrapper = std::atoi(Fixture::Slurp(f.Book("job.a1") + "/pid").c_str());
  }
  ASSERT_GT(wrapper, 0);
  // As if the wrapper had died and the victim had been given its pid.
  Result<ProcessIdentity> real = IdentityOf(victim.pid);
  ASSERT_TRUE(real.ok());
  ProcessIdentity stale = *real;
  stale.start_ticks += 1;
  { std::ofstream(f.Book("job.a1") + "/process") << stale.ToString() << "\n"; }
  auto c = f.Make();
  ASSERT_NE(c, nullptr);
  Action cancel = f.Job("job.a1", {});
  cancel.kind = ActionKind::kCancel;
  ASSERT_TRUE(c->Apply(cancel, ctx).ok());
  ObservedWorkload w = f.WaitFinished(*c, "job.a1");
  EXPECT_EQ(w.state, RunState::kCancelled);
  EXPECT_TRUE(victim.Alive());
  ::kill(-wrapper, SIGKILL);  // the real job, which the connector rightly no longer claims
  ::waitpid(wrapper, nullptr, 0);
}

TEST(LocalIsolation, RefusesToRunJobsAsRootOrTheControllersUserUnlessAllowed) {
  REQUIRE_ROOT();
  Fixture f("refuse");
  f.cluster.metadata.annotations.erase("local.gpufed.io/run-as-user");
  auto unset = f.TryMake();
  ASSERT_FALSE(unset.ok());
  EXPECT_EQ(unset.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(unset.status().message().find("cluster laptop"), std::string::npos) << unset.status().message();
  EXPECT_NE(unset.status().message().find("local.gpufed.io/run-as-user"), std::string::npos);
  EXPECT_NE(unset.status().message().find("local.gpufed.io/allow-controller-user"), std::string::npos);

  f.cluster.metadata.annotations["local.gpufed.io/run-as-user"] = "root";
  auto root = f.TryMake();
  ASSERT_FALSE(root.ok());
  EXPECT_NE(root.status().message().find("as root"), std::string::npos) << root.status().message();

  f.cluster.metadata.annotations["local.gpufed.io/allow-controller-user"] = "true";
  auto allowed = f.Make();
  ASSERT_NE(allowed, nullptr);
  ASSERT_TRUE(allowed->Apply(f.Job("me.a1", {"sh", "-c", "id -u"}), {&f.clock}).ok());
  f.WaitFinished(*allowed, "me.a1");
  EXPECT_EQ(f.Output("me.a1"), "0\n");
}

TEST(LocalIsolation, RefusesSettingsThatWouldExposeTheController) {
  REQUIRE_ROOT();
  {
    Fixture f("typo");
    f.cluster.metadata.annotations["local.gpufed.io/run-as-usr"] = "nobody";
    auto c = f.TryMake();
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.status().message().find("unknown annotation local.gpufed.io/run-as-usr"), std::string::npos);
  }
  {
    Fixture f("nouser");
    f.cluster.metadata.annotations["local.gpufed.io/run-as-user"] = "no-such-user-gpufed";
    EXPECT_EQ(f.TryMake().status().code(), StatusCode::kFailedPrecondition);
  }
  {
    Fixture f("inside");
    f.cluster.metadata.annotations["local.gpufed.io/job-root"] = f.state + "/jobs";
    auto c = f.TryMake();
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.status().message().find("overlaps the controller's state folder"), std::string::npos);
  }
  {
    Fixture f("openstate");
    ::chmod(f.state.c_str(), 0755);
    auto c = f.TryMake();
    ASSERT_FALSE(c.ok());
    EXPECT_NE(c.status().message().find("chmod 700 " + f.state), std::string::npos) << c.status().message();
  }
}

TEST(LocalIsolation, AClusterCanRefuseWorkloadsSubmittedThroughTheApi) {
  Fixture f("noapi");
  f.cluster.metadata.annotations["local.gpufed.io/accept-api-workloads"] = "false";
  auto c = f.Make();
  ASSERT_NE(c, nullptr);
  Action from_api = f.Job("train-u3.a1", {"true"});
  from_api.source = "api";
  Result<ApplyOutcome> api = c->Apply(from_api, {&f.clock});
  ASSERT_EQ(api.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(api.status().message().find("cluster laptop"), std::string::npos) << api.status().message();
  EXPECT_NE(api.status().message().find("local.gpufed.io/accept-api-workloads"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(f.Book("train-u3.a1"))) << "nothing of it was started";
  Action unknown = f.Job("old-1.a1", {"true"});  // recorded before actions kept their source
  EXPECT_EQ(c->Apply(unknown, {&f.clock}).status().code(), StatusCode::kInvalidArgument);
  Action from_repo = f.Job("train-1a2b3c4d.a1", {"true"});
  from_repo.source = "repo";
  ASSERT_TRUE(c->Apply(from_repo, {&f.clock}).ok());
  EXPECT_EQ(f.WaitFinished(*c, "train-1a2b3c4d.a1").state, RunState::kSucceeded);
}

}  // namespace
}  // namespace gpufed::connectors::local
