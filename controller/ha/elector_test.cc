// The elector on a real PostgreSQL, its own time virtual (ManualClock): nothing sleeps to
// let time pass on the replica side; only the database's clock is waited for (polled).
#include "controller/ha/elector.h"

#include <atomic>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/ha/ha_test_fixture.h"

namespace gpufed::ha {
namespace {

using ::testing::HasSubstr;

class ElectorTest : public HaTest {};

TEST_F(ElectorTest, OfTwoElectorsExactlyOneLeads) {
  ManualClock clock_a;
  ManualClock clock_b;
  auto a = MakeElector(LongOptions("replica-a"), clock_a);
  auto b = MakeElector(LongOptions("replica-b"), clock_b);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  for (int round = 0; round < 10; ++round) {
    a->Step();
    b->Step();
    EXPECT_NE(a->IsLeader(), b->IsLeader()) << "round " << round;
    clock_a.Advance(a->options().retry_period);
    clock_b.Advance(b->options().retry_period);
  }
  Elector& leader = a->IsLeader() ? *a : *b;
  Elector& standby = a->IsLeader() ? *b : *a;
  EXPECT_EQ(leader.Token()->epoch, 1);
  EXPECT_FALSE(standby.Token().has_value());
  // Both report the same leader (for /readyz) and one leader change.
  EXPECT_EQ(standby.Observed()->holder, leader.options().identity);
  EXPECT_EQ(standby.Observed()->epoch, 1);
  EXPECT_EQ(leader.Counters().leader_changes, 1U);
  EXPECT_EQ(leader.Counters().renew_failures, 0U);
}

TEST_F(ElectorTest, AStoppedLeaderIsReplacedAfterTheLeaseByTheDatabaseClockAndFenced) {
  ManualClock clock_a;
  ManualClock clock_b;
  auto a = MakeElector(ShortOptions("replica-a"), clock_a);
  auto b = MakeElector(ShortOptions("replica-b"), clock_b);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  a->Step();
  ASSERT_TRUE(a->IsLeader());
  const FenceToken old_token = *a->Token();
  const int64_t old_expiry = a->Observed()->expires_at_unix_micros;

  // A is stopped (SIGSTOP): it neither steps nor its clock moves. B retries every period;
  // the lease stays A's until it expires by the database's clock.
  b->Step();
  EXPECT_FALSE(b->IsLeader());
  const bool took_over = PollUntil([&] {
    clock_b.Advance(b->options().retry_period);
    b->Step();
    return b->IsLeader();
  });
  ASSERT_TRUE(took_over) << b->LastError().ToString();
  EXPECT_EQ(b->Token()->epoch, old_token.epoch + 1);
  EXPECT_GE(b->Observed()->renewed_at_unix_micros, old_expiry) << "taken before the lease expired";
  EXPECT_EQ(b->Counters().leader_changes, 1U);

  // A resumes (SIGCONT): its clock has jumped past its renew deadline, so it no longer
  // leads, and a write it had started with its old token is refused and writes nothing.
  clock_a.Advance(a->options().lease_duration);
  EXPECT_FALSE(a->IsLeader());
  Status refused = RunFenced(*setup_, old_token, "record a decision",
                             [](pg::Transaction& tx) { return InsertWrite(tx, "from-the-deposed"); });
  ASSERT_TRUE(IsFenced(refused)) << refused.ToString();
  EXPECT_THAT(refused.message(), HasSubstr("fenced: epoch 1 is no longer the lease's, now held by replica-b epoch 2"));
  EXPECT_EQ(Count(*setup_, "from-the-deposed"), 0);

  // Its next step sees B's lease and stays a standby.
  a->Step();
  EXPECT_FALSE(a->IsLeader());
  EXPECT_EQ(a->Observed()->holder, "replica-b");
  EXPECT_EQ(a->Counters().leader_changes, 2U);  // its own term, then B's
}

TEST_F(ElectorTest, ALeaderStopsOnItsOwnClockAtTheRenewDeadline) {
  ManualClock clock;
  std::atomic<bool> database_reachable{true};
  std::atomic<int> backend_pid{0};
  // 3 s of lease: the database must still show it live after the local deadline passed
  // (no real time is meant to pass, but a loaded machine takes some).
  auto elector_or = Elector::Create(
      Options("replica-a", Duration::FromSeconds(3), Duration::FromSeconds(2), Duration::FromMillis(500)), clock,
      [&]() -> Result<std::unique_ptr<pg::Connection>> {
        if (!database_reachable) return Unavailable("connect: planted outage");
        auto connection = pg::Connection::Open(SocketPolicy());
        if (connection.ok()) backend_pid = (*connection)->BackendPid();
        return connection;
      });
  ASSERT_TRUE(elector_or.ok());
  Elector& elector = **elector_or;
  elector.Step();
  ASSERT_TRUE(elector.IsLeader());
  const Duration renewed = clock.Now();

  // The database goes away for this replica: its session ends and reconnecting fails.
  database_reachable = false;
  ASSERT_TRUE(ConnectAsAdmin()
                  ->Exec("end the elector's session", "SELECT pg_terminate_backend($1)", {backend_pid.load()})
                  .ok());

  const Duration deadline = renewed + elector.options().renew_deadline;
  uint64_t failures = 0;
  while (clock.Now() + elector.options().retry_period < deadline) {
    clock.Advance(elector.options().retry_period);
    elector.Step();
    ++failures;
    EXPECT_TRUE(elector.IsLeader()) << "at " << clock.Now().ToString() << " before the deadline";
    EXPECT_FALSE(elector.LastError().ok());
  }
  EXPECT_EQ(elector.Counters().renew_failures, failures);
  clock.AdvanceTo(Duration::FromMillis(deadline.millis() - 1));
  EXPECT_TRUE(elector.IsLeader());
  EXPECT_TRUE(elector.Token().has_value());
  clock.AdvanceTo(deadline);
  EXPECT_FALSE(elector.IsLeader()) << "still leading at the renew deadline";
  EXPECT_FALSE(elector.Token().has_value());

  // It stopped before anyone could take over: by the database's clock the lease is still
  // its own (no real time passed), so a standby's attempt now is refused.
  auto lease = ReadLease(*setup_, "gpufed-leader");
  ASSERT_TRUE(lease.ok() && lease->has_value());
  EXPECT_FALSE((*lease)->expired);
  EXPECT_EQ((*lease)->holder, "replica-a");

  // When the database is back, the replica takes the lease only as a new term.
  database_reachable = true;
  ASSERT_TRUE(PollUntil([&] {
    clock.Advance(elector.options().retry_period);
    elector.Step();
    return elector.IsLeader();
  }));
  EXPECT_EQ(elector.Token()->epoch, 2);
}

// The database judges a renewal late (here its lease row is made to have lapsed, as after a
// failover to a server whose clock is ahead): the renewal makes a new epoch while the
// replica still leads on its own clock, so the owner sees the term change in Token().
TEST_F(ElectorTest, ARenewalJudgedLateStartsANewEpochWhileLeading) {
  ManualClock clock;
  auto elector = MakeElector(LongOptions("replica-a"), clock);
  elector->Step();
  ASSERT_EQ(elector->Token()->epoch, 1);
  ASSERT_TRUE(setup_
                  ->Exec("let the lease lapse by the database's clock",
                         "UPDATE gpufed_lease SET expires_at = clock_timestamp() - interval '1 second'")
                  .ok());
  const FenceToken first_term = *elector->Token();
  clock.Advance(elector->options().retry_period);
  elector->Step();
  ASSERT_TRUE(elector->IsLeader());
  EXPECT_EQ(elector->Token()->epoch, 2);
  EXPECT_EQ(elector->Counters().leader_changes, 2U);
  Status refused = RunFenced(*setup_, first_term, "write of the first term",
                             [](pg::Transaction& tx) { return InsertWrite(tx, "first-term"); });
  EXPECT_TRUE(IsFenced(refused)) << refused.ToString();
  EXPECT_EQ(Count(*setup_, "first-term"), 0);
}

TEST_F(ElectorTest, AReleasedLeaseIsTakenAtTheNextRetry) {
  ManualClock clock_a;
  ManualClock clock_b;
  auto a = MakeElector(LongOptions("replica-a"), clock_a);
  auto b = MakeElector(LongOptions("replica-b"), clock_b);
  a->Step();
  ASSERT_TRUE(a->IsLeader());
  ASSERT_TRUE(a->Release().ok());
  EXPECT_FALSE(a->IsLeader());
  b->Step();
  EXPECT_TRUE(b->IsLeader());
  EXPECT_EQ(b->Token()->epoch, 2);
}

TEST_F(ElectorTest, StepSaysWhenTheNextStepIsDue) {
  ManualClock clock;
  auto elector = MakeElector(LongOptions("replica-a"), clock);
  EXPECT_EQ(elector->Step(), Duration::FromSeconds(2));  // the retry period
  clock.Advance(Duration::FromMillis(500));
  EXPECT_EQ(elector->Step(), Duration::FromMillis(1500));  // not due: nothing is sent
  EXPECT_EQ(elector->Counters().leader_changes, 1U);
}

TEST_F(ElectorTest, ALeadersFencedWriteCommits) {
  ManualClock clock;
  auto elector = MakeElector(LongOptions("replica-a"), clock);
  elector->Step();
  ASSERT_TRUE(elector->IsLeader());
  Status written = RunFenced(*setup_, *elector->Token(), "record a decision",
                             [](pg::Transaction& tx) { return InsertWrite(tx, "decided"); });
  ASSERT_TRUE(written.ok()) << written.ToString();
  EXPECT_EQ(Count(*setup_, "decided"), 1);
  EXPECT_THAT(elector->Observed()->holder, HasSubstr("replica-a"));
}

// A leader whose process died (its election session closed, as kill -9 closes it) is
// replaced at the standby's next attempt, long before its 60 s lease would expire; the
// dead epoch's writes are fenced. A live leader's session keeps the lease its own.
TEST_F(ElectorTest, ALeaderWhoseSessionEndedIsReplacedAtOnceAndFenced) {
  ManualClock clock_a;
  ManualClock clock_b;
  auto a = MakeElector(LongOptions("replica-a"), clock_a);
  auto b = MakeElector(LongOptions("replica-b"), clock_b);
  a->Step();
  ASSERT_TRUE(a->IsLeader());
  const FenceToken old_token = *a->Token();
  b->Step();
  EXPECT_FALSE(b->IsLeader()) << "a live leader's session keeps the lease";
  clock_b.Advance(b->options().retry_period);
  b->Step();
  EXPECT_FALSE(b->IsLeader());

  a.reset();  // the process dies: its session (and the session lock) ends
  const bool took_over = PollUntil([&] {  // the server notices the closed socket at once, or nearly
    clock_b.Advance(b->options().retry_period);
    b->Step();
    return b->IsLeader();
  });
  ASSERT_TRUE(took_over) << b->LastError().ToString();
  EXPECT_EQ(b->Token()->epoch, old_token.epoch + 1);
  EXPECT_FALSE(b->Observed()->expired);
  Status refused = RunFenced(*setup_, old_token, "record a decision",
                             [](pg::Transaction& tx) { return InsertWrite(tx, "from-the-dead"); });
  ASSERT_TRUE(IsFenced(refused)) << refused.ToString();
  EXPECT_EQ(Count(*setup_, "from-the-dead"), 0);

  // The new leader holds its own session lock: a third replica does not take over.
  ManualClock clock_c;
  auto c = MakeElector(LongOptions("replica-c"), clock_c);
  c->Step();
  EXPECT_FALSE(c->IsLeader());
  EXPECT_EQ(c->Observed()->holder, "replica-b");
}

// A released lease or a stepped-down leader lets its session lock go, so the next term's
// lock is the only one held.
TEST_F(ElectorTest, ReleaseLetsTheSessionLockGo) {
  ManualClock clock;
  auto a = MakeElector(LongOptions("replica-a"), clock);
  a->Step();
  ASSERT_TRUE(a->IsLeader());
  auto locks = [&] {
    // This test's database only: tests that run beside it on the server hold locks of their own.
    auto rows = setup_->Exec("count advisory locks",
                             "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND "
                             "database = (SELECT oid FROM pg_database WHERE datname = current_database())");
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows->Int64(0, "n") : -1;
  };
  EXPECT_EQ(locks(), 1);
  ASSERT_TRUE(a->Release().ok());
  EXPECT_EQ(locks(), 0);
}

}  // namespace
}  // namespace gpufed::ha
