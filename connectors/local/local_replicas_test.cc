// A `local` cluster under replicas (gpufed run --store, issue 38): the terms of several
// controllers on one host share one bookkeeping folder. A new term adopts what the last
// one started, a recorded launch happens once, and a deposed term starts nothing.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "connectors/core/action_json.h"
#include "connectors/local/bookkeeping_lock.h"
#include "connectors/local/local_connector.h"
#include "connectors/local/local_test_fixture.h"

namespace gpufed::connectors::local {
namespace {

using testing::Fixture;

// Two replicas' state folders beside the fixture's, and the folder they share.
struct Replicas : Fixture {
  std::string book;    // local.gpufed.io/bookkeeping-dir
  std::string shared;  // where jobs count their starts (the job user may write it)

  explicit Replicas(const std::string& name) : Fixture(name) {
    book = dir + "/book";
    cluster.metadata.annotations["local.gpufed.io/bookkeeping-dir"] = book;
    shared = dir + "/shared";
    std::filesystem::create_directories(shared);
    ::chmod(shared.c_str(), 0777);
  }
  // The connector of the replica `replica` leading term `epoch`.
  Result<std::unique_ptr<Connector>> TryTerm(const std::string& replica, int64_t epoch) {
    const std::string state = dir + "/state-" + replica;
    std::filesystem::create_directories(state);
    ::chmod(state.c_str(), 0700);
    FactoryContext ctx{&clock, state + "/connectors/laptop", false};
    ctx.leader_epoch = epoch;
    return registry.Create(cluster, ctx);
  }
  std::unique_ptr<Connector> Term(const std::string& replica, int64_t epoch) {
    auto c = TryTerm(replica, epoch);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }
  // A job that notes each start of its key, then runs until cancelled or `seconds` pass.
  Action Counted(const std::string& key, int seconds) {
    Action a =
        Job(key, {"sh", "-c", "echo \"$GPUFED_WORKLOAD\" >> \"$SHARED/starts\"; sleep " + std::to_string(seconds)});
    a.run.env["SHARED"] = shared;
    return a;
  }
  std::string Starts() const { return Slurp(shared + "/starts"); }
  static std::optional<ObservedWorkload> Find(const Observation& o, const std::string& key) {
    for (const ObservedWorkload& w : o.workloads) {
      if (w.key == key) return w;
    }
    return std::nullopt;
  }
};

TEST(LocalReplicas, ReplicasWithoutASharedBookkeepingFolderAreRefused) {
  Replicas f("replicas_refused");
  f.cluster.metadata.annotations.erase("local.gpufed.io/bookkeeping-dir");
  auto c = f.TryTerm("a", 1);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("local.gpufed.io/bookkeeping-dir"), std::string::npos) << c.status().ToString();
  // One process alone keeps its record in its own state folder, as before.
  f.cluster.metadata.annotations.erase("local.gpufed.io/bookkeeping-dir");
  EXPECT_TRUE(f.TryMake().ok());
}

TEST(LocalReplicas, ABookkeepingFolderInsideTheJobRootIsRefused) {
  Replicas f("replicas_overlap");
  f.cluster.metadata.annotations["local.gpufed.io/bookkeeping-dir"] = f.job_root + "/book";
  auto c = f.TryTerm("a", 1);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("overlaps"), std::string::npos) << c.status().ToString();
  f.cluster.metadata.annotations["local.gpufed.io/bookkeeping-dir"] = "relative/book";
  EXPECT_FALSE(f.TryTerm("a", 1).ok());
}

TEST(LocalReplicas, AnExistingFolderThatIsNotPrivateIsRefusedNotChanged) {
  Replicas f("replicas_open_folder");
  std::filesystem::create_directories(f.book);
  ::chmod(f.book.c_str(), 0755);
  auto c = f.TryTerm("a", 1);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("mode 0755"), std::string::npos) << c.status().ToString();
  struct stat st{};
  ASSERT_EQ(::stat(f.book.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u) << "a folder the repository names was re-moded";
}

TEST(LocalReplicas, TheNextTermAdoptsTheJobsAndTheDeposedTermActsNoMore) {
  Replicas f("replicas_adopt");
  CallContext ctx{&f.clock};
  auto first = f.Term("a", 1);
  ASSERT_NE(first, nullptr);
  ASSERT_TRUE(first->Apply(f.Counted("long.a1", 60), ctx).ok());
  ASSERT_TRUE(Fixture::WaitForFile(f.shared + "/starts"));

  auto second = f.Term("b", 2);
  ASSERT_NE(second, nullptr);
  Result<Observation> seen = second->Observe(ctx);
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  std::optional<ObservedWorkload> adopted = Replicas::Find(*seen, "long.a1");
  ASSERT_TRUE(adopted.has_value()) << "the new term does not see the job the last one started";
  EXPECT_EQ(adopted->state, RunState::kRunning);
  // The same attempt again, as a new leader that finds its intent would: never twice.
  Result<ApplyOutcome> again = second->Apply(f.Counted("long.a1", 60), ctx);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->already_applied);

  // The deposed term, resumed: it starts, signals and observes nothing.
  Result<ApplyOutcome> late = first->Apply(f.Counted("late.a1", 60), ctx);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(late.status().message().find("deposed"), std::string::npos) << late.status().ToString();
  Action cancel = f.Counted("long.a1", 60);
  cancel.kind = ActionKind::kCancel;
  EXPECT_FALSE(first->Apply(cancel, ctx).ok());
  EXPECT_FALSE(first->Observe(ctx).ok());
  EXPECT_EQ(f.Starts(), "long.a1\n");

  // The current term cancels what the last one started.
  ASSERT_TRUE(second->Apply(cancel, ctx).ok());
  EXPECT_EQ(f.WaitFinished(*second, "long.a1").state, RunState::kCancelled);
  EXPECT_EQ(f.Starts(), "long.a1\n");
}

TEST(LocalReplicas, ASubmitRecordedButNotLaunchedIsLaunchedOnceByTheNextTerm) {
  Replicas f("replicas_recorded");
  CallContext ctx{&f.clock};
  {
    auto first = f.Term("a", 1);  // makes the shared folder
    ASSERT_NE(first, nullptr);
  }
  // The leader of term 1 recorded the submit and died before it launched the process.
  {
    auto ledger = ActionLedger::OpenInStateDir(f.book);
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    ASSERT_TRUE((*ledger)->Append({"submit", "short.a1", ActionToJson(f.Counted("short.a1", 0)).dump()}).ok());
  }
  auto second = f.Term("b", 2);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(f.WaitFinished(*second, "short.a1").state, RunState::kSucceeded);
  auto third = f.Term("a", 3);
  ASSERT_NE(third, nullptr);
  Result<Observation> seen = third->Observe(ctx);
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  std::optional<ObservedWorkload> w = Replicas::Find(*seen, "short.a1");
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->state, RunState::kSucceeded);
  EXPECT_EQ(f.Starts(), "short.a1\n");
}

TEST(LocalReplicas, AReplicaHoldingTheFolderLongMakesAStepUnavailableNotStuck) {
  Replicas f("replicas_held");
  CallContext ctx{&f.clock};
  auto current = f.Term("a", 1);
  ASSERT_NE(current, nullptr);
  {
    // As a replica paused in the middle of a launch holds it.
    Result<BookkeepingLock> held = BookkeepingLock::Take(f.book, Duration::FromSeconds(1));
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    Result<Observation> blocked = current->Observe(ctx);
    ASSERT_FALSE(blocked.ok());
    EXPECT_EQ(blocked.status().code(), StatusCode::kUnavailable);
  }
  EXPECT_TRUE(current->Observe(ctx).ok());
}

TEST(BookkeepingLock, RaisesTheFloorDurablyAndNeverLowersIt) {
  Fixture f("bookkeeping_floor");
  {
    auto lock = BookkeepingLock::Take(f.dir, Duration::FromSeconds(1));
    ASSERT_TRUE(lock.ok());
    EXPECT_EQ(lock->floor(), 0);
    ASSERT_TRUE(lock->Raise(7).ok());
    ASSERT_TRUE(lock->Raise(3).ok());
    EXPECT_EQ(lock->floor(), 7);
  }
  auto again = BookkeepingLock::Take(f.dir, Duration::FromSeconds(1));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->floor(), 7);
}

}  // namespace
}  // namespace gpufed::connectors::local
