#pragma once
// On the shared database the store's rows commit in the transaction of the journal
// records they follow from (issue 38): a submission group's rows with its
// workload-submitted records, and a pass's decision rows, intents and updates with its
// decision records. The leader's wiring, end to end on a real PostgreSQL 15 (the
// pg_cluster fixture, a database per test): the store as OpenSharedStore opens it, the
// journal on PgJournalStorage, both fenced by a real lease, joined by
// reconcile::JournalSubmissionsTo and reconcile::JournalDecisionLog with
// StoreWritesInJournalTransaction.
// What must hold: records and rows are one transaction (txid_current() noted by
// triggers); rows the database refuses are undone alone and the journal goes on; a
// deposed leader stores neither record nor row; a submission never waits for a
// transaction of the loop's; and the loop's rides and the submissions' share the journal
// without waiting on each other for good.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "controller/audit/file_snapshot_store.h"
#include "controller/audit/journal.h"
#include "controller/ha/fence.h"
#include "controller/ha/ha_test_fixture.h"
#include "controller/ha/lease.h"
#include "controller/pgjournal/pg_journal_storage.h"
#include "controller/pgstore/connection.h"
#include "controller/reconcile/journal_log.h"
#include "controller/reconcile/request_journal.h"
#include "controller/runtime/shared_store.h"
#include "controller/store/test_records.h"

namespace gpufed::runtime::journal_rows {

using store::WorkloadRecord;

inline constexpr char kLease[] = "rows-in-journal-test";

// From here on, triggers note the top-level transaction (txid_current(): a row's xmin
// would name the savepoint's subtransaction) of every workload row, journal record and
// counter write.
inline void NoteTransactions(pg::Connection& setup) {
  ASSERT_TRUE(
      setup
          .ExecScript(
              "note the writing transactions",
              "CREATE TABLE written_by (what text, key text, tx bigint);"
              "CREATE FUNCTION note_workload() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
              "INSERT INTO written_by VALUES ('row', NEW.uid, txid_current()); RETURN NEW; END $$;"
              "CREATE FUNCTION note_record() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
              "INSERT INTO written_by VALUES ('record', NEW.line, txid_current()); RETURN NEW; END $$;"
              "CREATE FUNCTION note_meta() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
              "INSERT INTO written_by VALUES ('meta', NEW.key, txid_current()); RETURN NEW; END $$;"
              "CREATE FUNCTION note_update() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
              "INSERT INTO written_by VALUES ('update', NEW.uid, txid_current()); RETURN NEW; END $$;"
              "CREATE FUNCTION note_intent() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
              "INSERT INTO written_by VALUES ('intent', NEW.key, txid_current()); RETURN NEW; END $$;"
              "CREATE FUNCTION note_decision() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
              "INSERT INTO written_by VALUES ('decision', NEW.uid, txid_current()); RETURN NEW; END $$;"
              "CREATE TRIGGER note AFTER INSERT ON workloads FOR EACH ROW EXECUTE FUNCTION note_workload();"
              "CREATE TRIGGER note_update AFTER UPDATE ON workloads FOR EACH ROW EXECUTE FUNCTION note_update();"
              "CREATE TRIGGER note AFTER INSERT ON actions FOR EACH ROW EXECUTE FUNCTION note_intent();"
              "CREATE TRIGGER note AFTER INSERT ON decisions FOR EACH ROW EXECUTE FUNCTION note_decision();"
              "CREATE TRIGGER note AFTER INSERT ON gpufed_journal FOR EACH ROW EXECUTE FUNCTION note_record();"
              "CREATE TRIGGER note AFTER INSERT OR UPDATE ON meta FOR EACH ROW EXECUTE FUNCTION note_meta()")
          .ok());
}
// Per uid placed, the transactions that wrote its decision record, its decision row,
// its submit intent and its Placed state, as NoteTransactions noted them.
struct PlacementTransactions {
  std::set<std::string> record, row, intent, update;
};
inline std::map<std::string, PlacementTransactions> Placements(pg::Connection& setup) {
  Result<pg::Rows> rows = setup.Exec(
      "read who wrote which placement",
      "SELECT w.what, w.key, w.tx::text AS tx FROM written_by w WHERE w.what IN ('decision', 'intent', 'update') "
      "UNION ALL SELECT 'record', u.uid, j.tx::text FROM written_by j, (SELECT DISTINCT key AS uid FROM written_by "
      "WHERE what = 'decision') u WHERE j.what = 'record' AND j.key LIKE '%\"kind\":\"decision\"%' "
      "AND position('\"uid\":\"' || u.uid || '\"' IN j.key) > 0");
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  std::map<std::string, PlacementTransactions> out;
  for (size_t i = 0; rows.ok() && i < rows->size(); ++i) {
    const std::string what = *rows->Text(i, "what");
    std::string uid = *rows->Text(i, "key");
    if (what == "intent") uid = uid.substr(0, uid.rfind(".a"));  // the action key: <uid>.a<attempt>
    PlacementTransactions& p = out[uid];
    std::set<std::string>& into = what == "record"     ? p.record
                                  : what == "decision" ? p.row
                                  : what == "intent"   ? p.intent
                                                       : p.update;
    into.insert(*rows->Text(i, "tx"));
  }
  return out;
}
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
    decisions_.reset();
    if (store_ != nullptr) store_->SetSubmissionJournal(nullptr);
    if (journal_ != nullptr) (void)journal_->Close();
    journal_.reset();
    store_.reset();
    HaTest::TearDown();
  }

  // The leader's store and journal as the App opens them on the shared database.
  void OpenLeader() {
    const ha::FenceToken token = token_;
    auto fence = [token](pg::Transaction& tx) { return ha::DeferFenceCheck(tx, token); };  // as replica.cc
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
    std::unique_ptr<pg::Connection> journal_session = Connect();
    journal_wire_ = journal_session.get();
    Result<std::unique_ptr<audit::AuditJournal>> journal = audit::AuditJournal::OpenWith(
        jo, std::make_unique<pgjournal::PgJournalStorage>(std::move(journal_session),
                                                          pgjournal::PgJournalStorageOptions{.fence = fence}));
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    journal_ = std::move(journal).value();
    ASSERT_TRUE(journal_->carries_work());
    store_->SetSubmissionJournal(
        reconcile::JournalSubmissionsTo(journal_.get(), &clock_, StoreWritesInJournalTransaction()));
    std::filesystem::create_directories(dir_);
    snapshots_ = std::make_unique<audit::FileSnapshotStore>(env_.get(), dir_);
    decisions_ = std::make_unique<reconcile::JournalDecisionLog>(journal_.get(), snapshots_.get(), dir_,
                                                                 StoreWritesInJournalTransaction());
    ASSERT_TRUE(decisions_->carries_store_writes());
  }

  // What a pass does with its placements (Reconciler::CommitDecisions): each workload's
  // decision record, and its decision row, submit intent and Placed state riding in the
  // records' transaction.
  Status Place(const std::vector<WorkloadRecord>& workloads, const std::string& cluster = "sim-a") {
    std::vector<placement::Decision> decided(workloads.size());
    std::vector<reconcile::LoggedDecision> logged;
    std::vector<store::DecisionRow> rows;
    std::vector<store::ActionRow> intents;
    std::vector<store::Store::WorkloadUpdate> updates;
    for (size_t i = 0; i < workloads.size(); ++i) {
      const WorkloadRecord& w = workloads[i];
      placement::Decision& d = decided[i];
      d.workload = w.name;
      d.tenant = w.tenant;
      d.outcome = placement::Outcome::kPlaced;
      d.binding.cluster = cluster;
      d.reason = "cheapest";
      reconcile::DecisionContext ctx{"r1", clock_.Now(), w.attempt, placement::DecisionKind::kPlace, w.uid};
      logged.push_back({&d, ctx});
      rows.push_back(reconcile::DecisionRowOf(d, ctx));
      intents.push_back(
          {"submit", w.ActionKey(), w.name, w.attempt, cluster, store::ActionState::kIntent, "", clock_.Now(), "{}"});
      WorkloadRecord placed = w;
      placed.state = store::WorkloadState::kPlaced;
      placed.cluster = cluster;
      updates.push_back({placed, "placed on " + cluster});
    }
    return store_->RecordIntentsAndUpdatesWith(
        [&](const store::RidingWrites& writes) { return decisions_->RecordAllWith(logged, writes); }, rows, intents,
        updates, clock_.Now());
  }

  static WorkloadRecord Record(const std::string& tenant, const std::string& name) {
    return store::testing::ApiSubmission(tenant, name);
  }
  Result<WorkloadRecord> Submit(const std::string& tenant, const std::string& name) {
    return store_->SubmitNumbered(Record(tenant, name), Duration::FromSeconds(1),
                                  {.principal = tenant + "-ci", .spec_hash = "sha256:00", .revision = "r1"});
  }
  void NoteTransactions() { ASSERT_NO_FATAL_FAILURE(journal_rows::NoteTransactions(*setup_)); }
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
  std::map<std::string, PlacementTransactions> Placements() { return journal_rows::Placements(*setup_); }
  // Another Store on the database (none of this leader's) stores live workloads of
  // vision's by these names, which this store's mirror has not seen.
  void StoreElsewhere(const std::vector<std::string>& names) {
    Result<std::unique_ptr<pgstore::PgConnection>> other = pgstore::PgConnection::Adopt(Connect(), false, "other");
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    Result<std::unique_ptr<store::Store>> other_store = store::Store::OpenOn(std::move(other).value());
    ASSERT_TRUE(other_store.ok()) << other_store.status().ToString();
    for (const std::string& name : names) {
      WorkloadRecord theirs = Record("vision", name);
      theirs.uid = name + "-x1";
      ASSERT_TRUE((*other_store)->Submit(theirs, Duration::FromSeconds(1)).ok());
    }
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
  const pg::Connection* journal_wire_ = nullptr;  // the journal's session, owned by journal_
  std::unique_ptr<audit::FileSnapshotStore> snapshots_;
  std::unique_ptr<reconcile::JournalDecisionLog> decisions_;
};

// The same leader, seen from its loop's side.
using DecisionsInJournal = SubmissionsInJournal;

}  // namespace gpufed::runtime::journal_rows
