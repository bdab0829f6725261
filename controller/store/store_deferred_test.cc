// Writes that wait for the store's next commit: invisible to another connection until
// then, committed with the next write (one commit for both) or by a read of their table,
// read where they wait by GetAction and GetMeta, bounded, and not lost when the store
// closes.
#include <gtest/gtest.h>

#include <filesystem>

#include "controller/store/store.h"

namespace gpufed::store {
namespace {

std::string Db(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/store_deferred_test_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir + "/gpufed.db";
}

WorkloadRecord Record(const std::string& name) {
  WorkloadRecord r;
  r.name = name;
  r.uid = name + "-u1";
  r.tenant = "t";
  r.source = "api";
  r.spec_text = "kind: Workload";
  return r;
}

TEST(StoreDeferred, ABookingWaitsForTheUpdateThatEndsTheAttemptAndCommitsWithIt) {
  const std::string path = Db("attempt");
  auto loop = Store::Open(path);
  auto reader = Store::Open(path);  // another connection: sees only what is committed
  ASSERT_TRUE(loop.ok() && reader.ok());
  WorkloadRecord r = Record("w");
  ASSERT_TRUE((*loop)->Submit(r, Duration::FromSeconds(1)).ok());
  AttemptRow a{"w", 1, "t", "c", "succeeded", 60, Money(2000000, "EUR"), false, {}, {}, "w-u1"};
  ASSERT_TRUE((*loop)->FinishAttemptLater(a).ok());
  EXPECT_EQ((*loop)->deferred_writes(), 1u);
  EXPECT_TRUE((*reader)->Attempts()->empty());
  r.state = WorkloadState::kSucceeded;
  r.cost = Money(2000000, "EUR");
  ASSERT_TRUE((*loop)->Update(r, "done", Duration::FromSeconds(61)).ok());
  EXPECT_EQ((*loop)->deferred_writes(), 0u);
  EXPECT_EQ((*reader)->Attempts()->size(), 1u);
  EXPECT_EQ((*reader)->Usage()->at("t").spent, Money(2000000, "EUR"));
  EXPECT_EQ((*(*reader)->GetByUid("w-u1"))->state, WorkloadState::kSucceeded);
  a.uid.clear();
  EXPECT_EQ((*loop)->FinishAttemptLater(a).code(), StatusCode::kInvalidArgument);
}

TEST(StoreDeferred, ReadsSeeWhatWaitsAndOnlyReadsOfItsTableCommitIt) {
  const std::string path = Db("reads");
  auto store = Store::Open(path);
  auto other = Store::Open(path);
  ASSERT_TRUE(store.ok() && other.ok());
  ActionRow row{"submit", "a-u1.a1", "a", 1, "c1", ActionState::kIntent, "", {}, "{}"};
  ASSERT_TRUE((*store)->RecordActionIntent(row).ok());
  (*store)->MarkActionLater("submit", "a-u1.a1", ActionState::kApplied, "");
  (*store)->SetMetaLater("clock_ms", "1000");
  (*store)->SetMetaLater("clock_ms", "2000");  // in place of the first
  EXPECT_EQ((*store)->deferred_writes(), 2u);
  // Read where they wait, without a commit.
  EXPECT_EQ((*(*store)->GetAction("submit", "a-u1.a1"))->state, ActionState::kApplied);
  EXPECT_EQ(*(*store)->GetMeta("clock_ms"), std::optional<std::string>("2000"));
  EXPECT_TRUE((*store)->ListUnfinished()->empty());
  EXPECT_EQ((*store)->deferred_writes(), 2u);
  EXPECT_EQ((*(*other)->GetAction("submit", "a-u1.a1"))->state, ActionState::kIntent);
  EXPECT_FALSE((*(*other)->GetMeta("clock_ms")).has_value());
  // A read of a table they change commits them all first.
  (*store)->RecordDecisionLater({0, {}, "a", 1, "rev", "placed", "c1", "fits", "{}", "t", "a-u1"});
  EXPECT_EQ((*store)->Decisions("t", "a")->size(), 1u);
  EXPECT_EQ((*store)->deferred_writes(), 0u);
  EXPECT_EQ((*(*other)->GetAction("submit", "a-u1.a1"))->state, ActionState::kApplied);
  EXPECT_EQ(*(*other)->GetMeta("clock_ms"), std::optional<std::string>("2000"));
  // An outcome for an action that has no intent marks nothing and blocks nothing.
  (*store)->MarkActionLater("cancel", "zzz", ActionState::kApplied, "");
  EXPECT_TRUE((*store)->Flush().ok());
  EXPECT_FALSE((*(*store)->GetAction("cancel", "zzz")).has_value());
}

TEST(StoreDeferred, AtMostAFewHundredWritesWait) {
  auto store = Store::Open(Db("bound"));
  ASSERT_TRUE(store.ok());
  for (int i = 0; i <= static_cast<int>(Store::kMaxDeferred); ++i) {
    (*store)->AppendHistoryLater(Duration::FromSeconds(i), "{}", Duration());
  }
  EXPECT_EQ((*store)->deferred_writes(), 0u);
  (*store)->AppendHistoryLater(Duration::FromSeconds(1000), "{}", Duration());
  EXPECT_EQ((*store)->ReadHistory(Duration())->size(), Store::kMaxDeferred + 2);
}

TEST(StoreDeferred, ClosingTheStoreCommitsWhatWaits) {
  const std::string path = Db("close");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->RecordActionIntent({"submit", "k", "a", 1, "c1", ActionState::kIntent, "", {}, "{}"}).ok());
    (*store)->MarkActionLater("submit", "k", ActionState::kFailed, "refused");
  }
  auto again = Store::Open(path);
  ASSERT_TRUE(again.ok());
  auto action = (*again)->GetAction("submit", "k");
  ASSERT_TRUE(action.ok() && action->has_value());
  EXPECT_EQ((*action)->state, ActionState::kFailed);
  EXPECT_EQ((*action)->error, "refused");
}

}  // namespace
}  // namespace gpufed::store
