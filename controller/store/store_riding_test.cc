// RecordIntentsAndUpdatesWith: the loop's rows riding in a transaction someone else
// commits (the journal's, on PostgreSQL). Here the rider is a second SQLite connection to
// the same file that runs the writes on its own thread, as the journal's group-commit
// leader may: what commits is the rows, while the writes that wait keep waiting for the
// store's own commit; what fails leaves nothing stored and the mirror read again; a rider
// that never runs them changes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "controller/store/sqlite.h"
#include "controller/store/store.h"

namespace gpufed::store {
namespace {

std::string Db(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/store_riding_test_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir + "/gpufed.db";
}

// A rider: its own connection, a transaction of its own with a row of its own in it (the
// journal's record), the store's writes run on another thread, then COMMIT, or ROLLBACK
// and `fail_after` when that is set.
struct Rider {
  std::unique_ptr<Database> db;
  Status fail_after = Status::Ok();
  bool run = true;
  int calls = 0;

  RidingCommit Commit() {
    return [this](const RidingWrites& writes) -> Status {
      ++calls;
      if (!run) return Unavailable("the journal is failed");
      Transaction tx(*db);
      GPUFED_RETURN_IF_ERROR(tx.begin_status());
      GPUFED_RETURN_IF_ERROR(db->Exec("INSERT INTO meta(key, value) VALUES('journal_record', 'seq 1')"));
      Status written;
      std::thread leader([&] { written = writes(*db, RefusedRidingWrite::kUndoneByTheWrites); });
      leader.join();
      if (!written.ok()) return written;  // rolled back as tx goes
      if (!fail_after.ok()) return fail_after;
      return tx.Commit();
    };
  }
};

class StoreRiding : public ::testing::Test {
 protected:
  void Open(const std::string& name) {
    path_ = Db(name);
    Result<std::unique_ptr<Store>> store = Store::Open(path_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    Result<std::unique_ptr<Database>> db = Database::Open(path_);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    rider_.db = std::move(db).value();
    WorkloadRecord r;
    r.name = "train";
    r.tenant = "vision";
    r.source = "api";
    r.spec_text = "kind: Workload";
    Result<WorkloadRecord> submitted = store_->SubmitNumbered(r, Duration::FromSeconds(1));
    ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
    workload_ = *submitted;
  }
  // The placement of `workload_` on sim-a: its decision row, intent and Placed state.
  Status Place() {
    DecisionRow row;
    row.at = Duration::FromSeconds(2);
    row.workload = workload_.name;
    row.tenant = workload_.tenant;
    row.uid = workload_.uid;
    row.attempt = 1;
    row.outcome = "placed";
    row.cluster = "sim-a";
    ActionRow intent{
        "submit", workload_.ActionKey(), workload_.name, 1, "sim-a", ActionState::kIntent, "", Duration::FromSeconds(2),
        "{}"};
    WorkloadRecord placed = workload_;
    placed.state = WorkloadState::kPlaced;
    placed.cluster = "sim-a";
    return store_->RecordIntentsAndUpdatesWith(rider_.Commit(), {row}, {intent}, {{placed, "placed on sim-a"}},
                                               Duration::FromSeconds(2));
  }
  WorkloadState StoredState() {
    Result<std::optional<WorkloadRecord>> stored = store_->Get("vision", "train");
    EXPECT_TRUE(stored.ok() && stored->has_value());
    return stored.ok() && stored->has_value() ? (*stored)->state : WorkloadState::kFailed;
  }
  WorkloadState MirroredState() {
    Result<std::vector<WorkloadRecord>> unfinished = store_->ListUnfinished();
    EXPECT_TRUE(unfinished.ok() && unfinished->size() == 1u);
    return unfinished.ok() && unfinished->size() == 1u ? (*unfinished)[0].state : WorkloadState::kFailed;
  }
  // The meta value the database holds (not one waiting in the store).
  std::optional<std::string> StoredMeta(const std::string& key) {
    Result<std::unique_ptr<Statement>> s = rider_.db->Prepare("SELECT value FROM meta WHERE key=$1");
    EXPECT_TRUE(s.ok());
    if (!s.ok()) return std::nullopt;
    (*s)->Bind(1, key);
    Result<bool> row = (*s)->Step();
    EXPECT_TRUE(row.ok());
    return row.ok() && *row ? std::optional<std::string>((*s)->Text(0)) : std::nullopt;
  }
  size_t Decisions() {
    Result<std::vector<DecisionRow>> rows = store_->Decisions("", "");
    EXPECT_TRUE(rows.ok());
    return rows.ok() ? rows->size() : 0;
  }

  std::string path_;
  std::unique_ptr<Store> store_;
  Rider rider_;
  WorkloadRecord workload_;
};

TEST_F(StoreRiding, TheRowsCommitInTheRidersTransactionAndWhatWaitsKeepsWaiting) {
  ASSERT_NO_FATAL_FAILURE(Open("commits"));
  store_->SetMetaLater("fair_share", "{\"vision\":1}");
  const int64_t commits = store_->commits();
  ASSERT_TRUE(Place().ok());
  EXPECT_EQ(rider_.calls, 1);
  EXPECT_EQ(store_->commits() - commits, 1);
  EXPECT_EQ(store_->deferred_writes(), 1u);
  EXPECT_FALSE(StoredMeta("fair_share").has_value());
  EXPECT_EQ(StoredState(), WorkloadState::kPlaced);
  EXPECT_EQ(MirroredState(), WorkloadState::kPlaced);
  EXPECT_EQ(Decisions(), 1u);
  Result<std::optional<ActionRow>> intent = store_->GetAction("submit", workload_.ActionKey());
  ASSERT_TRUE(intent.ok() && intent->has_value());
  EXPECT_EQ((*intent)->state, ActionState::kIntent);
  EXPECT_EQ(store_->GetMeta("journal_record").value(), std::optional<std::string>("seq 1"));
  Result<std::vector<Transition>> history = store_->History(workload_.uid);
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->back().to, "Placed");
  // The waiting write commits with the store's own next commit.
  ASSERT_TRUE(store_->Flush().ok());
  EXPECT_EQ(StoredMeta("fair_share"), std::optional<std::string>("{\"vision\":1}"));
}

TEST_F(StoreRiding, ACommitThatFailsAfterTheWritesStoresNothingAndTheMirrorIsReadAgain) {
  ASSERT_NO_FATAL_FAILURE(Open("fails"));
  store_->SetMetaLater("fair_share", "{\"vision\":1}");
  rider_.fail_after = Unavailable("COMMIT: the connection was lost");
  EXPECT_EQ(Place().code(), StatusCode::kUnavailable);
  // Nothing of the ride is stored; the mirror, which never saw the Placed row, agrees with
  // the database; what waits was not in the ride and still waits.
  EXPECT_EQ(StoredState(), WorkloadState::kPending);
  EXPECT_EQ(MirroredState(), WorkloadState::kPending);
  EXPECT_EQ(Decisions(), 0u);
  EXPECT_FALSE(store_->GetAction("submit", workload_.ActionKey()).value().has_value());
  EXPECT_EQ(store_->deferred_writes(), 1u);
  EXPECT_FALSE(StoredMeta("fair_share").has_value());
  // The next ride goes through.
  rider_.fail_after = Status::Ok();
  ASSERT_TRUE(Place().ok());
  EXPECT_EQ(MirroredState(), WorkloadState::kPlaced);
}

TEST_F(StoreRiding, TheWritesOwnErrorIsReturnedAndNothingOfThemIsStored) {
  ASSERT_NO_FATAL_FAILURE(Open("own-error"));
  workload_.uid = "ghost-u9";  // no such row: its update fails inside the ride
  EXPECT_EQ(Place().code(), StatusCode::kNotFound);
  EXPECT_EQ(Decisions(), 0u);
  EXPECT_EQ(StoredState(), WorkloadState::kPending);
  EXPECT_FALSE(store_->GetMeta("journal_record").value().has_value());
}

TEST_F(StoreRiding, ARiderThatNeverRunsTheWritesLeavesWhatWaitsWaiting) {
  ASSERT_NO_FATAL_FAILURE(Open("never-runs"));
  store_->SetMetaLater("fair_share", "{\"vision\":1}");
  rider_.run = false;
  const int64_t commits = store_->commits();
  EXPECT_EQ(Place().code(), StatusCode::kUnavailable);
  EXPECT_EQ(store_->commits(), commits);
  EXPECT_EQ(store_->deferred_writes(), 1u);
  EXPECT_EQ(StoredState(), WorkloadState::kPending);
  // It still commits with the store's next write of its own.
  ASSERT_TRUE(store_->Flush().ok());
  EXPECT_EQ(store_->GetMeta("fair_share").value(), std::optional<std::string>("{\"vision\":1}"));
}

TEST_F(StoreRiding, AReadOnlyStoreRefusesWithoutCallingTheRider) {
  ASSERT_NO_FATAL_FAILURE(Open("read-only"));
  store_.reset();
  Result<std::unique_ptr<Store>> reader = Store::OpenReadOnly(path_);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  store_ = std::move(reader).value();
  EXPECT_EQ(Place().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(rider_.calls, 0);
}

}  // namespace
}  // namespace gpufed::store
