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
#include "controller/runtime/shared_leader_test_fixture.h"
#include "controller/runtime/shared_store.h"

namespace gpufed::runtime {
namespace {

using store::WorkloadRecord;

constexpr char kLease[] = "submissions-in-journal-test";

// From here on, triggers note the top-level transaction (txid_current(): a row's xmin
// would name the savepoint's subtransaction) of every workload row, journal record and
// counter write.
void NoteTransactions(pg::Connection& setup) {
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
std::map<std::string, PlacementTransactions> Placements(pg::Connection& setup) {
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
  void NoteTransactions() { ASSERT_NO_FATAL_FAILURE(runtime::NoteTransactions(*setup_)); }
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
  std::map<std::string, PlacementTransactions> Placements() { return runtime::Placements(*setup_); }
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
  std::unique_ptr<audit::FileSnapshotStore> snapshots_;
  std::unique_ptr<reconcile::JournalDecisionLog> decisions_;
};

// The same leader, seen from its loop's side.
using DecisionsInJournal = SubmissionsInJournal;

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

TEST_F(DecisionsInJournal, APassesDecisionRecordsAndTheRowsThatFollowCommitInOneTransaction) {
  std::vector<WorkloadRecord> submitted;
  for (const char* name : {"seg-1", "seg-2", "seg-3"}) {
    Result<WorkloadRecord> r = Submit("vision", name);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    submitted.push_back(*r);
  }
  // A write that waits for the loop's next commit (the fair-share ledger) does not ride:
  // it would make every journal commit it joins longer.
  store_->SetMetaLater("fair_share", "{}");
  ASSERT_NO_FATAL_FAILURE(NoteTransactions());
  const int64_t commits_before = store_->commits();
  ASSERT_TRUE(Place(submitted).ok());
  const auto placed = Placements();
  ASSERT_EQ(placed.size(), submitted.size());
  std::set<std::string> transactions;
  for (const auto& [uid, p] : placed) {
    ASSERT_EQ(p.record.size(), 1u) << uid;
    EXPECT_EQ(p.row, p.record) << uid << ": its decision row and record were committed apart";
    EXPECT_EQ(p.intent, p.record) << uid << ": its intent and record were committed apart";
    EXPECT_EQ(p.update, p.record) << uid << ": its Placed state and record were committed apart";
    transactions.insert(p.record.begin(), p.record.end());
  }
  EXPECT_EQ(transactions.size(), 1u) << "one batch, one commit";
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM written_by WHERE what = 'meta' AND key = 'fair_share'"), 0);
  EXPECT_EQ(store_->deferred_writes(), 1u);
  EXPECT_EQ(store_->commits() - commits_before, 1);
  // The loop's rows are counted as the loop's writer; the store and its mirror say Placed.
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM state_totals WHERE writer = 'loop' AND state = 'Placed' "
                      "AND workloads = 3"),
            1);
  Result<std::vector<WorkloadRecord>> unfinished = store_->ListUnfinished();
  ASSERT_TRUE(unfinished.ok());
  for (const WorkloadRecord& w : *unfinished) EXPECT_EQ(w.state, store::WorkloadState::kPlaced) << w.uid;
  Result<std::vector<store::DecisionRow>> rows = store_->Decisions("vision", "seg-2");
  ASSERT_TRUE(rows.ok() && rows->size() == 1);
  EXPECT_EQ((*rows)[0].cluster, "sim-a");
  EXPECT_TRUE(journal_->health().ok());
}

TEST_F(DecisionsInJournal, RowsThatCannotBeWrittenAreUndoneAloneAndTheRecordsAndJournalStay) {
  Result<WorkloadRecord> known = Submit("vision", "known");
  ASSERT_TRUE(known.ok()) << known.status().ToString();
  WorkloadRecord unknown = Record("vision", "ghost");
  unknown.uid = "ghost-u99";  // never stored: its update fails inside the ride
  const int64_t records = CountRows("SELECT count(*) AS n FROM gpufed_journal WHERE kind = 'decision'");
  Status placed = Place({*known, unknown});
  EXPECT_EQ(placed.code(), StatusCode::kNotFound) << placed.ToString();
  // Write-ahead: the records say more than the store, never less.
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM gpufed_journal WHERE kind = 'decision'"), records + 2);
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM actions"), 0);
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM decisions"), 0);
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM workloads WHERE state = 'Placed'"), 0);
  EXPECT_TRUE(journal_->health().ok()) << journal_->health().ToString();
  // The mirror was read again and the next placement goes through.
  Result<std::optional<WorkloadRecord>> stored = store_->Get("vision", "known");
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->state, store::WorkloadState::kPending);
  ASSERT_TRUE(Place({*known}).ok());
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM workloads WHERE state = 'Placed'"), 1);
}

TEST_F(DecisionsInJournal, ADeposedLeadersPlacementStoresNeitherRecordNorRow) {
  Result<WorkloadRecord> late = Submit("vision", "late");
  ASSERT_TRUE(late.ok()) << late.status().ToString();
  ASSERT_TRUE(ha::ReleaseLease(*setup_, kLease, token_.holder, token_.epoch).ok());
  Result<ha::LeaseAttempt> taken = ha::TryAcquireOrRenew(*setup_, kLease, "leader-b", 0, Duration::FromSeconds(60));
  ASSERT_TRUE(taken.ok() && taken->held);
  const int64_t records = CountRows("SELECT count(*) AS n FROM gpufed_journal");
  EXPECT_FALSE(Place({*late}).ok());
  EXPECT_TRUE(ha::IsFenced(journal_->health())) << journal_->health().ToString();
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM gpufed_journal"), records);
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM actions"), 0);
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM workloads WHERE state = 'Placed'"), 0);
}

TEST_F(DecisionsInJournal, TheLoopsRidesAndConcurrentSubmissionsShareTheJournal) {
  // The loop holds the store's lock while its rows ride, lent to whichever thread leads
  // the journal's commit: submissions leading it (their rows take no lock of the store's)
  // and the loop leading theirs must all finish, each group and batch in one transaction.
  std::vector<WorkloadRecord> to_place;
  for (int i = 0; i < 20; ++i) {
    Result<WorkloadRecord> r = Submit("speech", "batch-" + std::to_string(i));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    to_place.push_back(*r);
  }
  ASSERT_NO_FATAL_FAILURE(NoteTransactions());
  std::vector<Status> submitted(40);
  std::vector<std::thread> submitters;
  submitters.reserve(4);
  for (size_t t = 0; t < 4; ++t) {
    submitters.emplace_back([&, t] {
      for (size_t i = t; i < submitted.size(); i += 4) {
        submitted[i] = Submit("vision", "job-" + std::to_string(i)).status();
      }
    });
  }
  for (const WorkloadRecord& w : to_place) ASSERT_TRUE(Place({w}).ok());
  for (std::thread& s : submitters) s.join();
  for (const Status& s : submitted) ASSERT_TRUE(s.ok()) << s.ToString();
  for (const auto& [uid, p] : Placements()) {
    ASSERT_EQ(p.record.size(), 1u) << uid;
    EXPECT_EQ(p.intent, p.record) << uid;
    EXPECT_EQ(p.update, p.record) << uid;
  }
  for (const auto& [uid, tx] : Transactions()) EXPECT_EQ(tx.first, tx.second) << uid;
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM workloads WHERE state = 'Placed'"), 20);
  EXPECT_EQ(CountRows("SELECT count(*) AS n FROM workloads WHERE tenant = 'vision'"), 40);
  EXPECT_TRUE(journal_->health().ok());
}

// The leader's own loop, as `gpufed run --store` opens it: the quickstart's App on the
// shared store places its first hour's work, each placement's rows riding in the
// transaction of its decision record.
class LeaderLoopInJournal : public SharedLeaderTest {};

TEST_F(LeaderLoopInJournal, EveryPlacementOfTheLeadersLoopCommitsWithItsDecisionRecord) {
  ASSERT_NO_FATAL_FAILURE(
      OpenLeader(Take("leader-loop-test", "leader-a"), std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart"));
  ASSERT_NO_FATAL_FAILURE(NoteTransactions(*setup_));
  ASSERT_NO_FATAL_FAILURE(StepThrough(Duration::FromSeconds(3600)));
  const std::map<std::string, PlacementTransactions> placed = Placements(*setup_);
  size_t with_intent = 0;
  for (const auto& [uid, p] : placed) {
    if (p.intent.empty()) continue;  // queued only: a decision with no intent to ride
    ++with_intent;
    // Every decision record of this uid (one per pass that decided it) was a commit of its
    // own; the placement's intent and Placed state rode in one of them.
    EXPECT_FALSE(p.record.empty()) << uid;
    for (const std::string& tx : p.intent)
      EXPECT_EQ(p.record.count(tx), 1u) << uid << ": an intent outside a record's commit";
    EXPECT_EQ(p.update.count(*p.intent.begin()), 1u) << uid << ": the Placed state outside the intent's commit";
  }
  EXPECT_GE(with_intent, 3u) << "the quickstart's first hour places work";
  EXPECT_TRUE(app_->controller().ready());
}

}  // namespace
}  // namespace gpufed::runtime
