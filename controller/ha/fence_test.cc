// Fencing against a real PostgreSQL: a write of a deposed epoch fails and writes nothing,
// and a takeover waits for a fenced write in flight (FOR SHARE on the lease row).
#include "controller/ha/fence.h"

#include <atomic>
#include <chrono>
#include <iostream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/ha/ha_test_fixture.h"

namespace gpufed::ha {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kLease = "gpufed-leader";
const Duration kShort = Duration::FromMillis(300);
const Duration kLong = Duration::FromSeconds(60);

FenceToken TokenOf(const std::string& holder, int64_t epoch) { return {std::string(kLease), holder, epoch}; }

class FenceTest : public HaTest {};

TEST_F(FenceTest, AWriteUnderTheHeldEpochCommits) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kLong).ok());
  Status written = RunFenced(*setup_, TokenOf("replica-a", 1), "record a decision",
                             [](pg::Transaction& tx) { return InsertWrite(tx, "decision-1"); });
  ASSERT_TRUE(written.ok()) << written.ToString();
  EXPECT_EQ(Count(*setup_, "decision-1"), 1);
}

TEST_F(FenceTest, ADeposedLeadersWriteFailsAndWritesNothing) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kShort).ok());
  ASSERT_TRUE(PollUntil([&] { return LeaseExpired(); }));
  auto taken = TryAcquireOrRenew(*setup_, kLease, "replica-b", 0, kLong);
  ASSERT_TRUE(taken.ok() && taken->held);

  bool write_ran = false;
  Status refused = RunFenced(*setup_, TokenOf("replica-a", 1), "record a decision", [&](pg::Transaction& tx) {
    write_ran = true;
    return InsertWrite(tx, "from-the-deposed");
  });
  ASSERT_TRUE(IsFenced(refused)) << refused.ToString();
  EXPECT_THAT(refused.message(), HasSubstr("fenced: epoch 1 is no longer the lease's, now held by replica-b epoch 2"));
  EXPECT_FALSE(write_ran);
  EXPECT_EQ(Count(*setup_, "from-the-deposed"), 0);
}

TEST_F(FenceTest, AnExpiredLeaseFencesItsHolderEvenBeforeATakeover) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kShort).ok());
  ASSERT_TRUE(PollUntil([&] { return LeaseExpired(); }));
  Status refused = RunFenced(*setup_, TokenOf("replica-a", 1), "record a decision",
                             [](pg::Transaction& tx) { return InsertWrite(tx, "late"); });
  ASSERT_TRUE(IsFenced(refused)) << refused.ToString();
  EXPECT_THAT(refused.message(), HasSubstr("expired by the database's clock"));
  EXPECT_EQ(Count(*setup_, "late"), 0);
}

TEST_F(FenceTest, AFailedWriteRollsBackUnderTheFence) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kLong).ok());
  Status failed = RunFenced(*setup_, TokenOf("replica-a", 1), "record two rows", [](pg::Transaction& tx) {
    GPUFED_RETURN_IF_ERROR(InsertWrite(tx, "half"));
    return Status(StatusCode::kInternal, "the second row failed");
  });
  EXPECT_EQ(failed.code(), StatusCode::kInternal);
  EXPECT_EQ(Count(*setup_, "half"), 0);
}

// The ordering the README argues: a takeover waits for a fenced write in flight; that
// write commits and stays visible; the old epoch's next write is refused.
TEST_F(FenceTest, ATakeoverWaitsForAnInFlightFencedWrite) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kShort).ok());
  auto leader = Connect();
  auto taker = Connect();
  ASSERT_NE(leader, nullptr);
  ASSERT_NE(taker, nullptr);

  auto in_flight = pg::Transaction::Begin(*leader, "a write in flight");
  ASSERT_TRUE(in_flight.ok());
  ASSERT_TRUE(CheckFence(*in_flight, TokenOf("replica-a", 1)).ok());
  ASSERT_TRUE(InsertWrite(*in_flight, "in-flight").ok());
  // The lease runs out (database clock) while the write is still open.
  ASSERT_TRUE(PollUntil([&] { return LeaseExpired(); }));

  std::atomic<bool> taker_returned{false};
  Result<LeaseAttempt> taken = Internal("not run");
  std::thread take([&] {
    taken = TryAcquireOrRenew(*taker, kLease, "replica-b", 0, kLong);
    taker_returned = true;
  });
  // The taker's UPDATE waits on the lease row's lock (pg_stat_activity says so).
  const int taker_pid = taker->BackendPid();
  const bool waits = PollUntil([&] {
    auto rows = setup_->Exec("read the taker's wait", "SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1",
                             {taker_pid});
    return rows.ok() && !rows->empty() && rows->Text(0, "wait_event_type").ok() &&
           *rows->Text(0, "wait_event_type") == "Lock";
  });
  EXPECT_TRUE(waits) << "the takeover did not wait for the fenced write's FOR SHARE lock";
  EXPECT_FALSE(taker_returned.load());

  Status committed = in_flight->Commit();
  take.join();
  EXPECT_TRUE(committed.ok()) << committed.ToString();
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_TRUE(taken->held);
  EXPECT_EQ(taken->lease.holder, "replica-b");
  EXPECT_EQ(taken->lease.epoch, 2);
  EXPECT_EQ(Count(*setup_, "in-flight"), 1);

  Status after = RunFenced(*leader, TokenOf("replica-a", 1), "write after the takeover",
                           [](pg::Transaction& tx) { return InsertWrite(tx, "after"); });
  EXPECT_TRUE(IsFenced(after)) << after.ToString();
  EXPECT_EQ(Count(*setup_, "after"), 0);
}

// The deferred check costs no round trip of its own: it goes with the transaction's first
// statement, and a deposed epoch's refusal fails that statement, which does not run.
TEST_F(FenceTest, ADeferredCheckRidesWithTheFirstStatementAndRefusesIt) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kLong).ok());
  auto leader = Connect();
  ASSERT_NE(leader, nullptr);
  {
    pg::Transaction tx = pg::Transaction::BeginDeferred(*leader, "a write");
    const uint64_t before = leader->round_trips();
    ASSERT_TRUE(DeferFenceCheck(tx, TokenOf("replica-a", 1)).ok());
    ASSERT_TRUE(InsertWrite(tx, "held").ok());
    EXPECT_EQ(leader->round_trips(), before + 1) << "BEGIN, the fence and the INSERT in one exchange";
    ASSERT_TRUE(tx.Commit().ok());
  }
  EXPECT_EQ(Count(*setup_, "held"), 1);

  // Another epoch takes over: the deferred check now refuses, naming the new holder.
  ASSERT_TRUE(ReleaseLease(*setup_, kLease, "replica-a", 1).ok());
  auto taken = TryAcquireOrRenew(*setup_, kLease, "replica-b", 0, kLong);
  ASSERT_TRUE(taken.ok() && taken->held);
  {
    pg::Transaction tx = pg::Transaction::BeginDeferred(*leader, "a deposed write");
    ASSERT_TRUE(DeferFenceCheck(tx, TokenOf("replica-a", 1)).ok());
    Status refused = InsertWrite(tx, "deposed");
    ASSERT_TRUE(IsFenced(refused)) << refused.ToString();
    EXPECT_THAT(refused.message(),
                HasSubstr("fenced: epoch 1 is no longer the lease's, now held by replica-b epoch 2"));
    EXPECT_FALSE(tx.Commit().ok());
  }
  EXPECT_EQ(Count(*setup_, "deposed"), 0);
  // The session is usable again once the refused transaction has ended.
  EXPECT_TRUE(leader->Exec("a read after the refusal", "SELECT 1").ok());
}

// With nothing but the COMMIT after it, the refusal fails the COMMIT: nothing commits.
TEST_F(FenceTest, ADeferredCheckRefusesACommitWithNothingBeforeIt) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kShort).ok());
  ASSERT_TRUE(PollUntil([&] { return LeaseExpired(); }));
  auto leader = Connect();
  ASSERT_NE(leader, nullptr);
  pg::Transaction tx = pg::Transaction::BeginDeferred(*leader, "take a role");
  ASSERT_TRUE(DeferFenceCheck(tx, TokenOf("replica-a", 1)).ok());
  Status refused = tx.Commit();
  ASSERT_TRUE(IsFenced(refused)) << refused.ToString();
  EXPECT_THAT(refused.message(), HasSubstr("expired by the database's clock"));
  EXPECT_FALSE(leader->InTransaction());
}

// A refusal that a caller wrapped in its own context is still one (a replica's App::Open
// fails with the audit trail's "audit journal DIR: fenced: ..." when the term ends while
// it opens, and must then stand by rather than exit); other failures are not.
TEST(IsFenced, KnowsTheFenceThroughACallersContext) {
  const Status refused = FailedPrecondition("fenced: epoch 1 is no longer the lease's, now held by b epoch 2");
  EXPECT_TRUE(IsFenced(refused));
  EXPECT_TRUE(IsFenced(FailedPrecondition("audit journal state-c/audit: " + refused.message())));
  // As the database's refusal arrives (pg/sqlstate.h: class GF is Unavailable, the API's 503).
  EXPECT_TRUE(IsFenced(Unavailable("check the fence: " + refused.message() + " (SQLSTATE GF001)")));
  EXPECT_FALSE(IsFenced(Internal("audit journal state-c/audit: " + refused.message())));
  EXPECT_FALSE(IsFenced(Unavailable("connect to PostgreSQL: connection refused")));
  EXPECT_FALSE(IsFenced(FailedPrecondition("another session holds the journal's writer role")));
  EXPECT_FALSE(IsFenced(FailedPrecondition("unfenced: nothing")));
}

// Standbys retry every period; while the lease is live their attempts must not touch the
// lease row's lock, or each would queue behind the leader's fenced writes and hold up the
// next ones.
TEST_F(FenceTest, AStandbysAttemptOnALiveLeaseDoesNotWaitForFencedWrites) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kLong).ok());
  auto leader = Connect();
  ASSERT_NE(leader, nullptr);
  auto in_flight = pg::Transaction::Begin(*leader, "a write in flight");
  ASSERT_TRUE(in_flight.ok());
  ASSERT_TRUE(CheckFence(*in_flight, TokenOf("replica-a", 1)).ok());

  // A lock wait would outlast this statement timeout (DeadlineExceeded), not return.
  pg::ConnectOptions impatient;
  impatient.statement_timeout = Duration::FromMillis(1000);
  auto standby = Connect(impatient);
  ASSERT_NE(standby, nullptr);
  auto attempt = TryAcquireOrRenew(*standby, kLease, "replica-b", 0, kLong);
  ASSERT_TRUE(attempt.ok()) << attempt.status().ToString();
  EXPECT_FALSE(attempt->held);
  EXPECT_EQ(attempt->lease.holder, "replica-a");
  EXPECT_TRUE(in_flight->Commit().ok());
}

// What a fence costs a write: the same one-row transaction with and without the check.
TEST_F(FenceTest, MeasureTheFencesCost) {
  ASSERT_TRUE(TryAcquireOrRenew(*setup_, kLease, "replica-a", 0, kLong).ok());
  constexpr int kWrites = 300;
  auto time = [&](bool fenced) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kWrites; ++i) {
      Status s = fenced ? RunFenced(*setup_, TokenOf("replica-a", 1), "fenced write",
                                    [](pg::Transaction& tx) { return InsertWrite(tx, "measured"); })
                        : [&] {
                            auto tx = pg::Transaction::Begin(*setup_, "plain write");
                            if (!tx.ok()) return tx.status();
                            GPUFED_RETURN_IF_ERROR(InsertWrite(*tx, "measured"));
                            return tx->Commit();
                          }();
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count() /
           kWrites;
  };
  const auto plain_us = time(false);
  const auto fenced_us = time(true);
  std::cout << "[ MEASURE  ] one-row write transaction over the Unix socket: plain " << plain_us << " us, fenced "
            << fenced_us << " us (" << kWrites << " each)\n";
  EXPECT_EQ(Count(*setup_, "measured"), 2 * kWrites);
}

}  // namespace
}  // namespace gpufed::ha
