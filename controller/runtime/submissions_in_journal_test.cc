// A submission group's rows commit in the transaction of its workload-submitted records
// (rows_in_journal_test_fixture.h says what is real here).
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "controller/runtime/rows_in_journal_test_fixture.h"

namespace gpufed::runtime::journal_rows {
namespace {

TEST_F(SubmissionsInJournal, AGroupsRecordsRowsAndCounterCommitInOneTransaction) {
  ASSERT_NO_FATAL_FAILURE(NoteTransactions());
  const int64_t commits_before = store_->commits();
  // Concurrent submitters, so that groups of several form.
  std::vector<std::thread> submitters;
  submitters.reserve(4);
  std::vector<Status> results(24);
  for (size_t t = 0; t < 4; ++t) {
    submitters.emplace_back([&, t] {
      for (size_t i = t; i < results.size(); i += 4) results[i] = Submit("vision", "job-" + std::to_string(i)).status();
    });
  }
  for (std::thread& s : submitters) s.join();
  for (const Status& s : results) ASSERT_TRUE(s.ok()) << s.ToString();
  const auto written = Transactions();
  ASSERT_EQ(written.size(), results.size());
  std::set<std::string> transactions;
  for (const auto& [uid, tx] : written) {
    EXPECT_EQ(tx.first, tx.second) << uid << ": its row and its record were committed apart";
    transactions.insert(tx.first);
  }
  // The last group also wrote the counter, in the same transaction.
  Result<pg::Rows> counter = setup_->Exec("counter", "SELECT value FROM meta WHERE key = 'uid_counter'");
  ASSERT_TRUE(counter.ok() && counter->size() == 1) << counter.status().ToString();
  EXPECT_EQ(*counter->Text(0, "value"), "24");
  // Each group's counter write was in its transaction too.
  Result<pg::Rows> counted = setup_->Exec(
      "counter writes", "SELECT DISTINCT tx::text AS tx FROM written_by WHERE what = 'meta' AND key = 'uid_counter'");
  ASSERT_TRUE(counted.ok()) << counted.status().ToString();
  std::set<std::string> counter_transactions;
  for (size_t i = 0; i < counted->size(); ++i) counter_transactions.insert(*counted->Text(i, "tx"));
  EXPECT_EQ(counter_transactions, transactions);
  // One journal commit per group, not one per submission and not two per group.
  EXPECT_EQ(store_->commits() - commits_before, static_cast<int64_t>(transactions.size()));
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM gpufed_journal WHERE kind = 'workload-submitted'"), 24);
  EXPECT_TRUE(journal_->health().ok());
}

// The group's records, rows, history and counter go with the journal's COMMIT: one
// exchange with the server, the refusals checked by the statements themselves.
TEST_F(SubmissionsInJournal, AGroupAloneInItsCommitIsOneRoundTrip) {
  ASSERT_TRUE(Submit("vision", "warm").ok());  // the mirror and the counter are loaded
  for (int i = 0; i < 3; ++i) {
    const uint64_t before = journal_wire_->round_trips();
    Result<WorkloadRecord> stored = Submit("vision", "alone-" + std::to_string(i));
    ASSERT_TRUE(stored.ok()) << stored.status().ToString();
    EXPECT_EQ(journal_wire_->round_trips() - before, 1U);
  }
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM workloads WHERE name LIKE 'alone-%'"), 3);
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM status_history WHERE workload LIKE 'alone-%'"), 3);
  Result<pg::Rows> counter = setup_->Exec("counter", "SELECT value FROM meta WHERE key = 'uid_counter'");
  ASSERT_TRUE(counter.ok() && counter->size() == 1) << counter.status().ToString();
  EXPECT_EQ(*counter->Text(0, "value"), "4");
}

TEST_F(SubmissionsInJournal, ARowTheDatabaseRefusesIsUndoneWithItsGroupAndTheJournalGoesOn) {
  ASSERT_TRUE(Submit("vision", "first").ok());
  // Another store on the database (none of this leader's) stores a live "seg" of vision's
  // that this store's mirror has not seen: the group's row of that name is refused by the
  // database (the live-name index), not by numbering.
  ASSERT_NO_FATAL_FAILURE(StoreElsewhere({"seg"}));
  const int64_t records_before = CountRows("SELECT count(*) AS n FROM gpufed_journal");

  Result<WorkloadRecord> refused = Submit("vision", "seg");
  EXPECT_EQ(refused.status().code(), StatusCode::kAlreadyExists) << refused.status().ToString();
  // The records were kept (write-ahead: the journal may say more than the store, never
  // less), the row was not, and the journal is healthy.
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM gpufed_journal"), records_before + 1);
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM workloads WHERE tenant = 'vision' AND name = 'seg'"), 1);
  EXPECT_TRUE(journal_->health().ok()) << journal_->health().ToString();
  // The store read its mirror again: "seg" is live (theirs), and the next submission goes
  // through with its row and record in one transaction.
  EXPECT_EQ(Submit("vision", "seg").status().code(), StatusCode::kAlreadyExists);
  ASSERT_NO_FATAL_FAILURE(NoteTransactions());
  Result<WorkloadRecord> next = Submit("vision", "next");
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  const auto written = Transactions();
  ASSERT_EQ(written.count(next->uid), 1u);
  EXPECT_EQ(written.at(next->uid).first, written.at(next->uid).second);
}

TEST_F(SubmissionsInJournal, RowsTheDatabaseRefusesInsideGroupsAreRefusedAloneAndTheJournalStaysHealthy) {
  ASSERT_TRUE(Submit("vision", "first").ok());
  // Another store holds live names this store's mirror has not seen, so the database
  // refuses them inside groups of several rows sent at once (WriteGroupRowsAtOnce): the
  // group is undone to its savepoint and written again one row at a time.
  std::vector<std::string> taken;
  taken.reserve(8);
  for (int i = 0; i < 8; ++i) taken.push_back("taken-" + std::to_string(i));
  ASSERT_NO_FATAL_FAILURE(StoreElsewhere(taken));
  ASSERT_NO_FATAL_FAILURE(NoteTransactions());
  constexpr int kThreads = 8, kEach = 10;
  std::vector<std::vector<std::pair<std::string, Status>>> results(kThreads);
  std::vector<std::thread> submitters;
  submitters.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string name =
            i == 5 ? "taken-" + std::to_string(t) : "w" + std::to_string(t) + "-" + std::to_string(i);
        results[t].emplace_back(name, Submit("vision", name).status());
      }
    });
  }
  for (std::thread& th : submitters) th.join();
  int accepted = 0;
  for (const auto& per_thread : results) {
    for (const auto& [name, status] : per_thread) {
      if (name.starts_with("taken-")) {
        EXPECT_EQ(status.code(), StatusCode::kAlreadyExists) << name << ": " << status.ToString();
      } else {
        EXPECT_TRUE(status.ok()) << name << ": " << status.ToString();
        ++accepted;
      }
    }
  }
  EXPECT_EQ(accepted, kThreads * (kEach - 1));
  EXPECT_TRUE(journal_->health().ok()) << journal_->health().ToString();
  const auto written = Transactions();
  EXPECT_EQ(written.size(), static_cast<size_t>(accepted));
  for (const auto& [uid, tx] : written) EXPECT_EQ(tx.first, tx.second) << uid;
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM workloads WHERE tenant = 'vision' AND name LIKE 'taken-%'"), 8);
  // Groups of several formed (the case this test is for).
  const store::CommitStats::Snapshot stats = store_->commit_stats();
  EXPECT_LT(static_cast<double>(stats.group_size.count()), stats.group_size.sum());
}

TEST_F(SubmissionsInJournal, ACounterAnotherWriterMovedFailsTheGroupAloneAndTheNextOneGoesThrough) {
  ASSERT_TRUE(Submit("vision", "first").ok());
  // Another writer moves the counter past this store's (as a second leader's numbering
  // would): the group's compared-and-set refuses, its rows are undone to the journal's
  // savepoint, and the records commit without them.
  ASSERT_TRUE(setup_->Exec("move the counter", "UPDATE meta SET value = '100' WHERE key = 'uid_counter'").ok());
  Result<WorkloadRecord> refused = Submit("vision", "second");
  EXPECT_EQ(refused.status().code(), StatusCode::kAborted) << refused.status().ToString();
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM workloads WHERE name = 'second'"), 0);
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM gpufed_journal WHERE kind = 'workload-submitted'"), 2);
  EXPECT_TRUE(journal_->health().ok()) << journal_->health().ToString();
  // The counter is read again: the next number follows the other writer's.
  Result<WorkloadRecord> again = Submit("vision", "second");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->uid, "second-u101");
}

TEST_F(SubmissionsInJournal, ADeposedLeadersSubmissionStoresNeitherRecordNorRow) {
  ASSERT_TRUE(Submit("vision", "first").ok());
  ASSERT_TRUE(ha::ReleaseLease(*setup_, kLease, token_.holder, token_.epoch).ok());
  Result<ha::LeaseAttempt> taken = ha::TryAcquireOrRenew(*setup_, kLease, "leader-b", 0, Duration::FromSeconds(60));
  ASSERT_TRUE(taken.ok() && taken->held);
  const int64_t records = CountRows("SELECT count(*) AS n FROM gpufed_journal");
  Result<WorkloadRecord> deposed = Submit("vision", "late");
  EXPECT_FALSE(deposed.ok());
  EXPECT_EQ(deposed.status().code(), StatusCode::kUnavailable) << deposed.status().ToString();  // a 503
  EXPECT_TRUE(ha::IsFenced(journal_->health())) << journal_->health().ToString();
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM gpufed_journal"), records);
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM workloads WHERE name = 'late'"), 0);
}

TEST_F(SubmissionsInJournal, ASubmissionDoesNotWaitForTheLoopsTransactionOnItsTenantsTotals) {
  Result<WorkloadRecord> held = Submit("vision", "held");
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  // A transaction of the loop's (writer "loop") moves vision's workload out of Pending and
  // stays open, holding the loop's state_totals rows of (vision, Pending) and (vision, Queued).
  std::unique_ptr<pg::Connection> loop = Connect();
  ASSERT_TRUE(loop->Exec("name", "SELECT set_config('gpufed.writer', 'loop', false)").ok());
  ASSERT_TRUE(loop->Exec("begin", "BEGIN").ok());
  ASSERT_TRUE(loop->Exec("move", "UPDATE workloads SET state = 'Queued' WHERE uid = $1", {held->uid}).ok());
  // The journal's transaction writes the new row's totals as the writer "api" (SET LOCAL):
  // with the loop's name it would wait for the COMMIT below, here for ever.
  Result<WorkloadRecord> next = Submit("vision", "next");
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_TRUE(loop->Exec("commit", "COMMIT").ok());
  Result<pg::Rows> writers = setup_->Exec("writers", "SELECT DISTINCT writer FROM state_totals ORDER BY writer");
  ASSERT_TRUE(writers.ok()) << writers.status().ToString();
  ASSERT_EQ(writers->size(), 2u);
  EXPECT_EQ(*writers->Text(0, "writer"), "api");
  EXPECT_EQ(*writers->Text(1, "writer"), "loop");
}

}  // namespace
}  // namespace gpufed::runtime::journal_rows
