// The Store on PostgreSQL behind the leader's fence (pgstore::PgConnection::SetWriteGuard
// with CheckFence): every write the Store makes, in a transaction of its own or not,
// commits while the epoch holds the lease and is refused, writing nothing, once another
// replica took it. Reads go on (a deposed leader becomes a standby that still reads).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/ha/fence.h"
#include "controller/ha/ha_test_fixture.h"
#include "controller/pgstore/connection.h"
#include "controller/store/store.h"

namespace gpufed::ha {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kLease = "gpufed-leader";

store::WorkloadRecord Record(const std::string& name) {
  store::WorkloadRecord r;
  r.name = name;
  r.tenant = "t";
  r.source = "api";
  r.spec_text = "kind: Workload";
  return r;
}

class FencedStoreTest : public HaTest {
 protected:
  // A Store whose every write transaction checks `token` first, on both of a leader's
  // sessions (the loop's and the submissions', as runtime/app.cc opens them); counts the
  // checks.
  std::unique_ptr<store::Store> FencedStore(const FenceToken& token) {
    auto fenced = [&](const std::string& writer) -> std::unique_ptr<pgstore::PgConnection> {
      auto connection = pgstore::PgConnection::Adopt(Connect(), /*read_only=*/false, writer);
      EXPECT_TRUE(connection.ok()) << connection.status().ToString();
      if (!connection.ok()) return nullptr;
      (*connection)->SetWriteGuard([this, token](pg::Transaction& tx) {
        ++checks_;
        return CheckFence(tx, token);
      });
      return std::move(connection).value();
    };
    auto loop = fenced("loop");
    auto submissions = fenced("api");
    if (loop == nullptr || submissions == nullptr) return nullptr;
    auto opened = store::Store::OpenOn(std::move(loop), std::move(submissions));
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }
  int64_t Rows(const std::string& table) {
    auto rows = setup_->Exec("count", "SELECT count(*) AS n FROM " + table);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows->Int64(0, "n") : -1;
  }
  int checks_ = 0;
};

TEST_F(FencedStoreTest, EveryWriteOfTheLeaderChecksTheFenceAndCommits) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, Duration::FromSeconds(60)).ok());
  auto store = FencedStore({std::string(kLease), "replica-a", 1});
  ASSERT_NE(store, nullptr);
  const int after_open = checks_;
  // A transaction of the Store's own (a submission) and writes it runs without one
  // (SetMeta, RecordDecision, MarkAction in SQLite's autocommit).
  Result<store::WorkloadRecord> submitted = store->SubmitNumbered(Record("a"), Duration::FromSeconds(1));
  ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
  ASSERT_TRUE(store->SetMeta("k", "v").ok());
  store::DecisionRow decision;
  decision.workload = "a";
  decision.tenant = "t";
  decision.uid = submitted->uid;
  decision.outcome = "placed";
  Result<int64_t> seq = store->RecordDecision(decision);
  ASSERT_TRUE(seq.ok()) << seq.status().ToString();
  EXPECT_GT(*seq, 0);  // RETURNING's row survives its own transaction's commit
  EXPECT_GE(checks_ - after_open, 3);
  EXPECT_EQ(Rows("workloads"), 1);
  EXPECT_EQ(Rows("decisions"), 1);
  // Reads never begin a transaction, so they never check the fence.
  const int before_reads = checks_;
  ASSERT_TRUE(store->GetByUid(submitted->uid).ok());
  ASSERT_TRUE(store->Decisions("", "", 10).ok());
  EXPECT_EQ(checks_, before_reads);
}

TEST_F(FencedStoreTest, ADeposedLeadersStoreWritesNothingAndStillReads) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, Duration::FromMillis(300)).ok());
  auto store = FencedStore({std::string(kLease), "replica-a", 1});
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(store->SubmitNumbered(Record("before"), Duration::FromSeconds(1)).ok());
  ASSERT_TRUE(PollUntil([&] { return LeaseExpired(); }));
  auto taken = TryAcquireOrRenew(*setup_, kLease, "replica-b", 0, Duration::FromSeconds(60));
  ASSERT_TRUE(taken.ok() && taken->held);

  Result<store::WorkloadRecord> submitted = store->SubmitNumbered(Record("after"), Duration::FromSeconds(2));
  ASSERT_FALSE(submitted.ok());
  EXPECT_TRUE(IsFenced(submitted.status())) << submitted.status().ToString();
  // Unavailable, which the API answers 503: nothing was stored and a client retries at the
  // leader (a 409 would say the submission itself conflicts; gpufed-load saw one).
  EXPECT_EQ(submitted.status().code(), StatusCode::kUnavailable) << submitted.status().ToString();
  Status meta = store->SetMeta("k", "v");
  EXPECT_TRUE(IsFenced(meta)) << meta.ToString();
  EXPECT_THAT(meta.message(), HasSubstr("now held by replica-b epoch 2"));
  store::DecisionRow decision;
  decision.workload = "before";
  EXPECT_TRUE(IsFenced(store->RecordDecision(decision).status()));
  EXPECT_EQ(Rows("workloads"), 1);
  EXPECT_EQ(Rows("decisions"), 0);
  EXPECT_EQ(Rows("meta WHERE key = 'k'"), 0);
  // What the old term committed is there for the new leader, and the old one reads it.
  auto got = store->List("t");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->size(), 1u);
}

}  // namespace
}  // namespace gpufed::ha
