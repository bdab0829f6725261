// A pass's decision records and the store rows that follow from them commit in one
// transaction (rows_in_journal_test_fixture.h says what is real here), down to the
// leader's own loop.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "controller/runtime/rows_in_journal_test_fixture.h"
#include "controller/runtime/shared_leader_test_fixture.h"

namespace gpufed::runtime::journal_rows {
namespace {

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

// A queued decision's row commits after its record, on the loop's own session. When that
// commit fails, the record is journalled all the same, and the pass must remember so: the
// next pass does not journal the unchanged decision again (before 576dade it did, once per
// pass, while the store kept failing).
TEST_F(LeaderLoopInJournal, AnUnchangedQueuedDecisionIsJournalledOnceWhenItsRowCannotBeStored) {
  ASSERT_NO_FATAL_FAILURE(
      OpenLeader(Take("leader-loop-test", "leader-a"), std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart"));
  ASSERT_TRUE(setup_
                  ->ExecScript("refuse queued rows",
                               "CREATE FUNCTION refuse_queued() RETURNS trigger LANGUAGE plpgsql AS "
                               "$$ BEGIN IF NEW.outcome = 'queued' THEN RAISE EXCEPTION 'no queued rows'; END IF; "
                               "RETURN NEW; END $$;"
                               "CREATE TRIGGER refuse_queued BEFORE INSERT ON decisions "
                               "FOR EACH ROW EXECUTE FUNCTION refuse_queued()")
                  .ok());
  // Each pass's queued rows fail the loop's commit after the records: Step says so, and
  // the next one tries again.
  int failed_steps = 0;
  for (int i = 0; i < 40; ++i) {
    if (!app_->Step().ok()) ++failed_steps;
    clock_.Advance(Duration::FromSeconds(30));
  }
  EXPECT_GT(failed_steps, 1) << "the refused rows did not fail the loop's commits";
  // Records of one attempt that repeat the one before them (same outcome and reason).
  auto counted = setup_->Exec(
      "count repeated decisions",
      "SELECT count(*) FILTER (WHERE outcome = 'queued') AS queued,"
      " count(*) FILTER (WHERE outcome = prev_outcome AND reason = prev_reason) AS repeated FROM ("
      " SELECT line::json->>'outcome' AS outcome, line::json->>'reason' AS reason,"
      "  lag(line::json->>'outcome') OVER w AS prev_outcome, lag(line::json->>'reason') OVER w AS prev_reason"
      " FROM gpufed_journal WHERE kind = 'decision'"
      " WINDOW w AS (PARTITION BY line::json->>'uid', line::json->>'attempt' ORDER BY seq)) AS records");
  ASSERT_TRUE(counted.ok()) << counted.status().ToString();
  EXPECT_GE(*counted->Int64(0, "queued"), 1) << "the quickstart's first hour queues work";
  EXPECT_EQ(*counted->Int64(0, "repeated"), 0) << "an unchanged decision journalled again";
  auto rows = setup_->Exec("count queued rows", "SELECT count(*) AS n FROM decisions WHERE outcome = 'queued'");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows->Int64(0, "n"), 0) << "the trigger let a queued row through";
}

}  // namespace
}  // namespace gpufed::runtime::journal_rows
