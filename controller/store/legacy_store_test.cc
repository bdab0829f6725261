// A store made by the gpufed before the Store's SQL became portable (testdata/README.md
// says how store_v7.db was made) opens, reads and goes on as it did: the SQLite
// migrations are the same, and the portable statements read what the old ones wrote.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "controller/store/store.h"

namespace gpufed::store {
namespace {

namespace fs = std::filesystem;

Money Eur(int64_t micros) { return Money(micros, "EUR"); }

// A copy of the fixture (a test never changes the committed file).
std::string CopyOfLegacyStore(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/legacy_store_test_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(std::string(GPUFED_SOURCE_DIR) + "/controller/store/testdata/store_v7.db", dir + "/gpufed.db");
  fs::permissions(dir + "/gpufed.db", fs::perms::owner_read | fs::perms::owner_write);
  return dir + "/gpufed.db";
}

void ExpectWhatTheOldStoreWrote(Store& s) {
  EXPECT_EQ(s.schema_version(), Store::LatestSchemaVersion());  // migrated from 7
  auto train = s.Get("nlp", "train");
  ASSERT_TRUE(train.ok() && train->has_value()) << train.status().ToString();
  EXPECT_EQ((*train)->uid, "train-u1");
  EXPECT_EQ((*train)->state, WorkloadState::kSucceeded);
  EXPECT_EQ((*train)->cost, Eur(7'250'000));
  EXPECT_TRUE((*train)->cloud);
  EXPECT_EQ((*train)->binding_json, R"({"node":"n1"})");
  EXPECT_EQ((*train)->started.millis(), 50'000);
  EXPECT_EQ((*train)->finished.millis(), 3'650'000);
  EXPECT_EQ((*train)->updated_seq, 1);
  auto unfinished = s.ListUnfinished();
  ASSERT_TRUE(unfinished.ok());
  ASSERT_EQ(unfinished->size(), 2u);
  EXPECT_EQ((*unfinished)[0].uid, "serve-u2");
  EXPECT_EQ((*unfinished)[0].state, WorkloadState::kQueued);
  EXPECT_EQ((*unfinished)[1].uid, "sweep-u3");
  EXPECT_TRUE((*unfinished)[1].cancel_requested);
  auto history = s.History("train-u1");
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 4u);
  EXPECT_EQ(history->back().to, "Succeeded");
  auto decisions = s.Decisions("", "");
  ASSERT_TRUE(decisions.ok());
  ASSERT_EQ(decisions->size(), 2u);
  EXPECT_EQ((*decisions)[0].seq, 2);
  EXPECT_EQ((*decisions)[0].outcome, "queued");
  auto actions = s.Actions();
  ASSERT_TRUE(actions.ok());
  ASSERT_EQ(actions->size(), 2u);
  EXPECT_EQ((*actions)[0].key, "train-u1.a1");
  EXPECT_EQ((*actions)[0].state, ActionState::kApplied);
  EXPECT_EQ((*actions)[1].error, "quota");
  auto attempts = s.Attempts();
  ASSERT_TRUE(attempts.ok());
  ASSERT_EQ(attempts->size(), 1u);
  EXPECT_DOUBLE_EQ((*attempts)[0].gpu_seconds, 28800.5);
  auto usage = s.Usage();
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->at("nlp").cloud_spent, Eur(7'250'000));
  auto days = s.MeteredDays(Duration());
  ASSERT_TRUE(days.ok());
  ASSERT_EQ(days->size(), 1u);
  EXPECT_EQ((*days)[0].spent, Eur(7'250'000));
  auto counts = s.CountByState();
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 3u);  // cv Pending, cv Queued, nlp Succeeded
  EXPECT_EQ((*counts)[2].tenant, "nlp");
  EXPECT_EQ((*counts)[2].cost, Eur(7'250'000));
  auto samples = s.ReadHistory(Duration());
  ASSERT_TRUE(samples.ok());
  EXPECT_EQ(samples->size(), 2u);
  EXPECT_EQ(*s.GetMeta("clock_ms"), std::optional<std::string>("3650000"));
  auto mark = s.Mark();
  ASSERT_TRUE(mark.ok());
  EXPECT_EQ(mark->transition_id, 7);
  EXPECT_EQ(mark->attempt_rowid, 1);
}

TEST(LegacyStore, AStoreTheOldSqlWroteOpensAndReadsAsItWas) {
  auto store = Store::Open(CopyOfLegacyStore("read"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ExpectWhatTheOldStoreWrote(**store);
}

TEST(LegacyStore, AStoreTheOldSqlWroteOpensReadOnlyOnceMigrated) {
  const std::string path = CopyOfLegacyStore("read_only");
  // Version 7 is older than this gpufed's: a read-only open never migrates, and says so.
  auto refused = Store::OpenReadOnly(path);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("schema version 7 is older"), std::string::npos)
      << refused.status().ToString();
  ASSERT_TRUE(Store::Open(path).ok());  // what `gpufed run` does once
  auto store = Store::OpenReadOnly(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ExpectWhatTheOldStoreWrote(**store);
}

TEST(LegacyStore, AStoreTheOldSqlWroteGoesOnWhereItStopped) {
  auto store = Store::Open(CopyOfLegacyStore("continue"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Store& s = **store;
  WorkloadRecord next;
  next.name = "train";  // finished: the name may be submitted again
  next.tenant = "nlp";
  next.source = "api";
  auto stored = s.SubmitNumbered(next, Duration::FromSeconds(4000));
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  EXPECT_EQ(stored->uid, "train-u4");  // the counter goes on
  EXPECT_EQ((*s.GetByUid("train-u4"))->updated_seq, 4);  // and the submission order
  DecisionRow row{0, Duration::FromSeconds(4000), "train", 1, "rev-2", "queued", "", "", "{}", "nlp", stored->uid};
  EXPECT_EQ(*s.RecordDecision(row), 3);
  AttemptRow again{"train", 1, "nlp", "eu-cloud", "succeeded", 1, Eur(1), true, {}, {}, "train-u1"};
  ASSERT_TRUE(s.FinishAttempt(again).ok());  // booked before: once only
  EXPECT_EQ(s.Usage()->at("nlp").spent, Eur(7'250'000));
  ActionRow failed{"create", "serve-u2.a1", "serve-u2", 1, "eu-cloud", ActionState::kIntent, "", {}, "{}"};
  ASSERT_TRUE(s.RecordActionIntent(failed).ok());  // a failed intent is replaced, in place
  auto actions = s.Actions();
  ASSERT_TRUE(actions.ok() && actions->size() == 2u);
  EXPECT_EQ((*actions)[1].state, ActionState::kIntent);
  EXPECT_EQ((*actions)[1].cluster, "eu-cloud");
}

}  // namespace
}  // namespace gpufed::store
