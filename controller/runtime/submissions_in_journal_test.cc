// On the shared database a submission group's store rows commit in the transaction of its
// journal records (issue 38): the leader's wiring, end to end on a real PostgreSQL 15 (the
// pg_cluster fixture, a database per test): the store as OpenSharedStore opens it, the
// journal on PgJournalStorage, both fenced by a real lease, joined by
// reconcile::JournalSubmissionsTo with StoreWritesInJournalTransaction.
// What must hold: a group's records, rows and counter are one transaction (the same xmin);
// a row the database refuses is undone alone and the journal goes on; a deposed leader's
// submission stores neither record nor row; and a submission still never waits for a
// transaction of the loop's.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "controller/audit/journal.h"
#include "controller/ha/fence.h"
#include "controller/ha/ha_test_fixture.h"
#include "controller/ha/lease.h"
#include "controller/pgjournal/pg_journal_storage.h"
#include "controller/pgstore/connection.h"
#include "controller/reconcile/request_journal.h"
#include "controller/runtime/shared_store.h"

namespace gpufed::runtime {
namespace {

using store::WorkloadRecord;

constexpr char kLease[] = "submissions-in-journal-test";

// The lease table and a setup session come from controller/ha's fixture.
class SubmissionsInJournal : public ha::HaTest {
 protected:
  void SetUp() override {
    HaTest::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    Result<ha::LeaseAttempt> taken = ha::TryAcquireOrRenew(*setup_, kLease, "leader-a", 0, Duration::FromSeconds(60));
    ASSERT_TRUE(taken.ok() && taken->held) << (taken.ok() ? taken->lease.holder : taken.status().ToString());
    token_ = {kLease, "leader-a", taken->lease.epoch};
    ASSERT_NO_FATAL_FAILURE(OpenLeader());
  }
  void TearDown() override {
    if (store_ != nullptr) store_->SetSubmissionJournal(nullptr);
    if (journal_ != nullptr) (void)journal_->Close();
    journal_.reset();
    store_.reset();
    HaTest::TearDown();
  }

  // The leader's store and journal as the App opens them on the shared database.
  void OpenLeader() {
    const ha::FenceToken token = token_;
    auto fence = [token](pg::Transaction& tx) { return ha::CheckFence(tx, token); };
    SharedStore shared;
    shared.uri = "host=" + server().socket_dir + " port=" + server().port + " user=gpufed dbname=" + database() +
                 " passfile=" + server().passfile;
    shared.fence = fence;
    Result<std::unique_ptr<store::Store>> opened = OpenSharedStore(shared);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    dir_ = ::testing::TempDir() + "/gpufed_submissions_in_journal_" + database();
    std::filesystem::remove_all(dir_);
    audit::JournalOptions jo;
    jo.env = env_.get();
    jo.dir = dir_;
    Result<std::unique_ptr<audit::AuditJournal>> journal = audit::AuditJournal::OpenWith(
        jo,
        std::make_unique<pgjournal::PgJournalStorage>(Connect(), pgjournal::PgJournalStorageOptions{.fence = fence}));
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    journal_ = std::move(journal).value();
    ASSERT_TRUE(journal_->carries_work());
    store_->SetSubmissionJournal(
        reconcile::JournalSubmissionsTo(journal_.get(), &clock_, StoreWritesInJournalTransaction()));
  }

  static WorkloadRecord Record(const std::string& tenant, const std::string& name) {
    WorkloadRecord r;
    r.name = name;
    r.tenant = tenant;
    r.source = "api";
    r.spec_text = "kind: Workload";
    r.estimate = Money(1'000'000, "EUR");
    return r;
  }
  Result<WorkloadRecord> Submit(const std::string& tenant, const std::string& name) {
    return store_->SubmitNumbered(Record(tenant, name), Duration::FromSeconds(1),
                                  {.principal = tenant + "-ci", .spec_hash = "sha256:00", .revision = "r1"});
  }
  // From here on, triggers note the top-level transaction (txid_current(): a row's xmin
  // would name the savepoint's subtransaction) of every workload row, journal record and
  // counter write.
  void NoteTransactions() {
    ASSERT_TRUE(
        setup_
            ->ExecScript(
                "note the writing transactions",
                "CREATE TABLE written_by (what text, key text, tx bigint);"
                "CREATE FUNCTION note_workload() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "INSERT INTO written_by VALUES ('row', NEW.uid, txid_current()); RETURN NEW; END $$;"
                "CREATE FUNCTION note_record() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "INSERT INTO written_by VALUES ('record', NEW.line, txid_current()); RETURN NEW; END $$;"
                "CREATE FUNCTION note_meta() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "INSERT INTO written_by VALUES ('meta', NEW.key, txid_current()); RETURN NEW; END $$;"
                "CREATE TRIGGER note AFTER INSERT ON workloads FOR EACH ROW EXECUTE FUNCTION note_workload();"
                "CREATE TRIGGER note AFTER INSERT ON gpufed_journal FOR EACH ROW EXECUTE FUNCTION note_record();"
                "CREATE TRIGGER note AFTER INSERT OR UPDATE ON meta FOR EACH ROW EXECUTE FUNCTION note_meta()")
            .ok());
  }
  // Per stored workload uid, the transaction that wrote its row and the one that wrote its
  // workload-submitted record ("" when there is none), as NoteTransactions noted them.
  std::map<std::string, std::pair<std::string, std::string>> Transactions() {
    Result<pg::Rows> rows = setup_->Exec(
        "read who wrote what",
        "SELECT w.key AS uid, w.tx::text AS row_tx, COALESCE(("
        "  SELECT j.tx::text FROM written_by j WHERE j.what = 'record' AND j.key LIKE '%workload-submitted%' "
        "  AND position('\"uid\":\"' || w.key || '\"' IN j.key) > 0), '') AS record_tx "
        "FROM written_by w WHERE w.what = 'row' ORDER BY w.key");
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::map<std::string, std::pair<std::string, std::string>> out;
    for (size_t i = 0; rows.ok() && i < rows->size(); ++i) {
      out[*rows->Text(i, "uid")] = {*rows->Text(i, "row_tx"), *rows->Text(i, "record_tx")};
    }
    return out;
  }
  int64_t CountRows(const std::string& sql) {
    Result<pg::Rows> rows = setup_->Exec("count", sql);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows->Int64(0, "n") : -1;
  }

  std::unique_ptr<audit::Env> env_ = audit::NewPosixEnv();
  ManualClock clock_;
  ha::FenceToken token_;
  std::string dir_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<audit::AuditJournal> journal_;
};

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

TEST_F(SubmissionsInJournal, ARowTheDatabaseRefusesIsUndoneWithItsGroupAndTheJournalGoesOn) {
  ASSERT_TRUE(Submit("vision", "first").ok());
  // Another store on the database (none of this leader's) stores a live "seg" of vision's
  // that this store's mirror has not seen: the group's row of that name is refused by the
  // database (the live-name index), not by numbering.
  Result<std::unique_ptr<pgstore::PgConnection>> other = pgstore::PgConnection::Adopt(Connect(), false, "other");
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  Result<std::unique_ptr<store::Store>> other_store = store::Store::OpenOn(std::move(other).value());
  ASSERT_TRUE(other_store.ok()) << other_store.status().ToString();
  WorkloadRecord theirs = Record("vision", "seg");
  theirs.uid = "seg-x1";
  ASSERT_TRUE((*other_store)->Submit(theirs, Duration::FromSeconds(1)).ok());
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
}  // namespace gpufed::runtime
