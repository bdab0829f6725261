#include "controller/reconcile/detached_attempts.h"

#include <gtest/gtest.h>

#include "tests/testutil/temp_dir.h"

namespace gpufed::reconcile {
namespace {

DetachedAttempt Entry(const std::string& uid, int attempt) {
  return {uid + ".a" + std::to_string(attempt), uid, "train", "nlp", attempt, "onprem-slurm", false, "lost",
          Duration::FromSeconds(1'800'000'000)};
}

TEST(DetachedAttempts, EncodeAndDecodeRoundTrip) {
  std::map<std::string, DetachedAttempt> entries;
  for (const DetachedAttempt& d : {Entry("train-u1", 1), Entry("train-u2", 3)}) entries[d.key] = d;
  entries["train-u2.a3"].cloud = true;
  entries["train-u2.a3"].outcome = "cancelled";
  entries["train-u2.a3"].last_gpu_seconds = 5400.5;
  entries["train-u2.a3"].last_cost = Money(1'250'000, "USD");
  entries["train-u2.a3"].started = Duration::FromSeconds(1'799'990'000);
  entries["train-u2.a3"].last_heard = Duration::FromSeconds(1'799'999'000);
  Result<std::map<std::string, DetachedAttempt>> back = DetachedAttempts::Decode(DetachedAttempts::Encode(entries));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, entries);
}

TEST(DetachedAttempts, ADamagedValueIsDataLossNamingTheEntry) {
  for (const char* text : {"", "{}", "[1]", R"([{"key": "k"}])",
                           R"([{"key":"k","uid":"u","workload":"w","tenant":"t","cluster":"c","outcome":"lost",)"
                           R"("attempt":"1","cloud":false,"detached_ms":0}])",
                           R"([{"key":"","uid":"u","workload":"w","tenant":"t","cluster":"c","outcome":"lost",)"
                           R"("attempt":1,"cloud":false,"detached_ms":0}])"}) {
    Result<std::map<std::string, DetachedAttempt>> decoded = DetachedAttempts::Decode(text);
    ASSERT_FALSE(decoded.ok()) << text;
    EXPECT_EQ(decoded.status().code(), StatusCode::kDataLoss) << text;
    EXPECT_NE(decoded.status().message().find("detached_attempts"), std::string::npos) << decoded.status().message();
  }
}

TEST(DetachedAttempts, EntriesAreDurableAcrossAReopenedStore) {
  testutil::TempDir dir;
  const std::string path = dir.str() + "/gpufed.db";
  {
    std::unique_ptr<store::Store> store = std::move(store::Store::Open(path)).value();
    DetachedAttempts detached;
    ASSERT_TRUE(detached.Add(Entry("train-u1", 1), *store).ok());
    ASSERT_TRUE(detached.Add(Entry("train-u2", 2), *store).ok());
    ASSERT_TRUE(detached.Remove("train-u1.a1", *store).ok());
    ASSERT_TRUE(detached.Remove("not-there.a1", *store).ok());
  }
  std::unique_ptr<store::Store> store = std::move(store::Store::Open(path)).value();
  DetachedAttempts reopened;
  ASSERT_TRUE(reopened.Load(*store).ok());
  ASSERT_EQ(reopened.entries().size(), 1u);
  EXPECT_EQ(reopened.entries().begin()->second, Entry("train-u2", 2));
}

TEST(DetachedAttempts, ADamagedStoreValueStopsTheLoadInsteadOfForgettingJobs) {
  testutil::TempDir dir;
  std::unique_ptr<store::Store> store = std::move(store::Store::Open(dir.str() + "/gpufed.db")).value();
  ASSERT_TRUE(store->SetMeta(DetachedAttempts::kMetaKey, "[{]").ok());
  DetachedAttempts detached;
  Status loaded = detached.Load(*store);
  EXPECT_EQ(loaded.code(), StatusCode::kDataLoss);
  // Nothing is written over it: an Add fails the same way.
  EXPECT_EQ(detached.Add(Entry("train-u1", 1), *store).code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace gpufed::reconcile
