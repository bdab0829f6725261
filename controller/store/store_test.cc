#include "controller/store/store.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace gpufed::store {
namespace {

std::string Db(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/store_test_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir + "/gpufed.db";
}

WorkloadRecord Record(const std::string& name, const std::string& tenant = "t") {
  WorkloadRecord r;
  r.name = name;
  r.uid = name + "-u1";
  r.tenant = tenant;
  r.source = "api";
  r.spec_text = "kind: Workload";
  return r;
}

TEST(Store, MigratesANewDatabaseToTheLatestSchema) {
  auto store = Store::Open(Db("migrate"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->schema_version(), Store::LatestSchemaVersion());
}

TEST(Store, RefusesAFileThatIsNotADatabase) {
  std::string path = Db("garbage");
  std::ofstream(path) << std::string(4096, 'x');
  EXPECT_FALSE(Store::Open(path).ok());
}

TEST(Store, KeepsSubmissionsAndTransitionsAcrossReopen) {
  std::string path = Db("reopen");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE((*store)->Submit(Record("a"), Duration::FromSeconds(1)).ok());
    WorkloadRecord r = *(*store)->Get("a").value();
    r.state = WorkloadState::kQueued;
    r.reason = "capacity";
    ASSERT_TRUE((*store)->Update(r, "capacity", Duration::FromSeconds(2)).ok());
  }
  auto store = Store::Open(path);
  auto r = (*store)->Get("a");
  ASSERT_TRUE(r.ok() && *r);
  EXPECT_EQ((*r)->state, WorkloadState::kQueued);
  auto history = (*store)->History("a");
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[1].from, "Pending");
  EXPECT_EQ((*history)[1].to, "Queued");
}

TEST(Store, ListUnfinishedReadsOnlyWaitingAndActiveRows) {
  auto store = Store::Open(Db("unfinished"));
  ASSERT_TRUE(store.ok());
  Store& s = **store;
  // A history of finished work in every terminal state, and a little live work.
  const WorkloadState terminal[] = {WorkloadState::kSucceeded, WorkloadState::kFailed, WorkloadState::kRejected,
                                    WorkloadState::kCancelled};
  for (int i = 0; i < 400; ++i) {
    WorkloadRecord r = Record("done-" + std::to_string(i));
    ASSERT_TRUE(s.Submit(r, Duration::FromSeconds(i)).ok());
    r.state = terminal[i % 4];
    ASSERT_TRUE(s.Update(r, "ended", Duration::FromSeconds(i)).ok());
  }
  const WorkloadState live[] = {WorkloadState::kPending, WorkloadState::kQueued, WorkloadState::kRequeued,
                                WorkloadState::kPlaced, WorkloadState::kRunning, WorkloadState::kPreempted};
  for (int i = 0; i < 6; ++i) {
    WorkloadRecord r = Record("live-" + std::to_string(i));
    ASSERT_TRUE(s.Submit(r, Duration::FromSeconds(1000 + i)).ok());
    r.state = live[i];
    r.estimate = Money(1000000 * (i + 1), "EUR");
    r.cloud = i == 4;
    ASSERT_TRUE(s.Update(r, "live", Duration::FromSeconds(1000 + i)).ok());
  }
  const int64_t before = s.rows_read();
  auto unfinished = s.ListUnfinished();
  ASSERT_TRUE(unfinished.ok());
  EXPECT_EQ(s.rows_read() - before, 6);  // the 400 finished rows are never read
  ASSERT_EQ(unfinished->size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ((*unfinished)[i].name, "live-" + std::to_string(i));  // submission order
    EXPECT_EQ((*unfinished)[i].state, live[i]);
  }
  // Estimates of the active ones (Placed 4 EUR, Running 5 EUR on a cloud).
  auto estimates = s.ActiveEstimates();
  ASSERT_TRUE(estimates.ok());
  EXPECT_EQ((*estimates)["t"].all.micros(), 9000000);
  EXPECT_EQ((*estimates)["t"].cloud.micros(), 5000000);
  // Counts cover the whole history.
  auto counts = s.CountByState();
  ASSERT_TRUE(counts.ok());
  int64_t total = 0;
  for (const StateCount& c : *counts) total += c.workloads;
  EXPECT_EQ(total, 406);
  EXPECT_EQ(s.rows_read() - before, 6);  // aggregates read no rows into records
}

TEST(Store, RejectsADuplicateLiveWorkloadButAcceptsOneAfterItEnded) {
  auto store = Store::Open(Db("dup"));
  ASSERT_TRUE((*store)->Submit(Record("a"), {}).ok());
  EXPECT_EQ((*store)->Submit(Record("a"), {}).code(), StatusCode::kAlreadyExists);
  WorkloadRecord r = *(*store)->Get("a").value();
  r.state = WorkloadState::kSucceeded;
  ASSERT_TRUE((*store)->Update(r, "done", {}).ok());
  WorkloadRecord again = Record("a");
  again.uid = "a-u2";
  EXPECT_TRUE((*store)->Submit(again, {}).ok());
  EXPECT_EQ((*store)->Get("a").value()->uid, "a-u2");
}

TEST(Store, ListsOneTenantsWorkloadsInSubmissionOrder) {
  auto store = Store::Open(Db("list"));
  ASSERT_TRUE((*store)->Submit(Record("b", "x"), {}).ok());
  ASSERT_TRUE((*store)->Submit(Record("a", "y"), {}).ok());
  ASSERT_TRUE((*store)->Submit(Record("c", "x"), {}).ok());
  auto xs = (*store)->List("x");
  ASSERT_EQ(xs->size(), 2u);
  EXPECT_EQ((*xs)[0].name, "b");
  EXPECT_EQ((*xs)[1].name, "c");
  EXPECT_EQ((*store)->List()->size(), 3u);
}

TEST(Store, AnActionIntentIsRecordedOnceAndAFailedOneCanBeReplaced) {
  auto store = Store::Open(Db("actions"));
  ActionRow row{"submit", "a-u1.a1", "a", 1, "c1", ActionState::kIntent, "", {}, "{\"v\":1}"};
  ASSERT_TRUE((*store)->RecordActionIntent(row).ok());
  ASSERT_TRUE((*store)->MarkAction("submit", "a-u1.a1", ActionState::kApplied, "").ok());
  row.payload = "{\"v\":2}";
  ASSERT_TRUE((*store)->RecordActionIntent(row).ok());
  auto got = (*store)->GetAction("submit", "a-u1.a1");
  EXPECT_EQ((*got)->state, ActionState::kApplied);
  EXPECT_EQ((*got)->payload, "{\"v\":1}");
  ASSERT_TRUE((*store)->MarkAction("submit", "a-u1.a1", ActionState::kFailed, "busy").ok());
  ASSERT_TRUE((*store)->RecordActionIntent(row).ok());
  got = (*store)->GetAction("submit", "a-u1.a1");
  EXPECT_EQ((*got)->state, ActionState::kIntent);
  EXPECT_EQ((*got)->payload, "{\"v\":2}");
  EXPECT_EQ((*store)->MarkAction("cancel", "zzz", ActionState::kApplied, "").code(), StatusCode::kNotFound);
}

TEST(Store, BooksAnAttemptsCostOnlyOnce) {
  auto store = Store::Open(Db("usage"));
  AttemptRow a{"w", 1, "t", "cloud", "succeeded", 3600, Money(5000000, "EUR"), true, {}, Duration::FromSeconds(60)};
  ASSERT_TRUE((*store)->FinishAttempt(a).ok());
  ASSERT_TRUE((*store)->FinishAttempt(a).ok());
  auto usage = (*store)->Usage();
  EXPECT_EQ(usage->at("t").spent, Money(5000000, "EUR"));
  EXPECT_EQ(usage->at("t").cloud_spent, Money(5000000, "EUR"));
  EXPECT_EQ((*store)->Attempts()->size(), 1u);
}

TEST(Store, KeepsTheNewestDecisionsFirst) {
  auto store = Store::Open(Db("decisions"));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*store)->RecordDecision({0, {}, "w", 1, "rev", "queued", "", "r" + std::to_string(i), "{}"}).ok());
  }
  auto rows = (*store)->Decisions("w", 2);
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].reason, "r2");
}

TEST(Store, ACancelRequestSurvivesAConcurrentUpdate) {
  auto store = Store::Open(Db("cancel"));
  ASSERT_TRUE((*store)->Submit(Record("a"), {}).ok());
  WorkloadRecord stale = *(*store)->Get("a").value();
  ASSERT_TRUE((*store)->RequestCancel("a").ok());
  stale.state = WorkloadState::kQueued;
  ASSERT_TRUE((*store)->Update(stale, "queued", {}).ok());
  EXPECT_TRUE((*store)->Get("a").value()->cancel_requested);
  EXPECT_EQ((*store)->RequestCancel("nope").code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace gpufed::store
