// The store's commit statistics (/metrics): counted per commit and per submission, so a
// test asserts on counts and never on time.
#include "controller/store/commit_stats.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>
#include <vector>

#include "controller/store/store.h"

namespace gpufed::store {
namespace {

WorkloadRecord Record(const std::string& name) {
  WorkloadRecord r;
  r.name = name;
  r.tenant = "alpha";
  r.source = "api";
  r.spec_text = "kind: Workload";
  return r;
}

TEST(CommitStats, EachCommitIsCountedByWriterAndEachSubmissionWithItsGroup) {
  const std::string dir = ::testing::TempDir() + "/commit_stats_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto store = Store::Open(dir + "/gpufed.db");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  // One at a time: three groups of one, three API commits.
  for (const char* name : {"a", "b", "c"}) ASSERT_TRUE((*store)->SubmitNumbered(Record(name), Duration::FromSeconds(1)).ok());
  CommitStats::Snapshot s = (*store)->commit_stats();
  EXPECT_EQ(s.api_commit_seconds.count(), 3u);
  EXPECT_EQ(s.group_size.count(), 3u);
  EXPECT_EQ(s.group_size.counts().front(), 3u);  // the le="1" bucket
  EXPECT_DOUBLE_EQ(s.group_size.sum(), 3);
  EXPECT_EQ(s.submit_wait_seconds.count(), 3u);
  const uint64_t loop_before = s.loop_commit_seconds.count();
  // A refused submission (its name is live) still waited and still went through a commit.
  EXPECT_EQ((*store)->SubmitNumbered(Record("a"), Duration::FromSeconds(2)).status().code(), StatusCode::kAlreadyExists);
  // The loop's write: one commit of its own.
  Result<std::optional<WorkloadRecord>> a = (*store)->Get("alpha", "a");
  ASSERT_TRUE(a.ok() && a->has_value());
  WorkloadRecord placed = **a;
  placed.state = WorkloadState::kPlaced;
  ASSERT_TRUE((*store)->Update(placed, "placed", Duration::FromSeconds(3)).ok());
  s = (*store)->commit_stats();
  EXPECT_EQ(s.api_commit_seconds.count(), 4u);
  EXPECT_EQ(s.submit_wait_seconds.count(), 4u);
  EXPECT_EQ(s.loop_commit_seconds.count(), loop_before + 1);
  EXPECT_EQ(static_cast<int64_t>(s.api_commit_seconds.count() + s.loop_commit_seconds.count()), (*store)->commits());
}

// From many threads: every submission is counted once, in exactly one group.
TEST(CommitStats, ConcurrentSubmissionsAreEachCountedInOneGroup) {
  const std::string dir = ::testing::TempDir() + "/commit_stats_concurrent";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto store = Store::Open(dir + "/gpufed.db");
  ASSERT_TRUE(store.ok());
  constexpr int kThreads = 6, kEach = 20;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        (void)(*store)->SubmitNumbered(Record("w" + std::to_string(t) + "-" + std::to_string(i)), Duration::FromSeconds(1));
      }
    });
  }
  for (std::thread& th : threads) th.join();
  const CommitStats::Snapshot s = (*store)->commit_stats();
  EXPECT_DOUBLE_EQ(s.group_size.sum(), kThreads * kEach);
  EXPECT_EQ(s.submit_wait_seconds.count(), static_cast<uint64_t>(kThreads * kEach));
  EXPECT_EQ(s.group_size.count(), s.api_commit_seconds.count());
  EXPECT_LE(s.group_size.count(), static_cast<uint64_t>(kThreads * kEach));
}

}  // namespace
}  // namespace gpufed::store
