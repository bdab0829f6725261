// The unfinished mirror (unfinished_rows.h) against the database it mirrors: after random
// writes of every kind, what a Store answers from the mirror equals what a second Store,
// opened on the same file (whose first read comes from SQLite), answers.
#include "controller/store/unfinished_rows.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "controller/store/store.h"

namespace gpufed::store {
namespace {

std::string Db(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/unfinished_rows_test_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir + "/gpufed.db";
}

// `reused`: a vector kept across calls, as the loop keeps one between passes; the records
// ListUnfinishedInto writes over its old (longer or shorter) contents must be the same.
void ExpectSameAnswers(Store& mirrored, const std::string& path, int step,
                       std::vector<WorkloadRecord>* reused = nullptr) {
  Result<std::unique_ptr<Store>> fresh = Store::Open(path);
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  Result<std::vector<WorkloadRecord>> want = (*fresh)->ListUnfinished();
  Result<std::vector<WorkloadRecord>> got = mirrored.ListUnfinished();
  ASSERT_TRUE(want.ok() && got.ok());
  ASSERT_EQ(got->size(), want->size()) << "step " << step;
  for (size_t i = 0; i < want->size(); ++i) EXPECT_TRUE((*got)[i] == (*want)[i]) << "step " << step << " row " << i;
  if (reused != nullptr) {
    ASSERT_TRUE(mirrored.ListUnfinishedInto(reused).ok());
    ASSERT_EQ(reused->size(), want->size()) << "step " << step;
    for (size_t i = 0; i < want->size(); ++i)
      EXPECT_TRUE((*reused)[i] == (*want)[i]) << "step " << step << " row " << i;
  }
  Result<std::map<std::string, ActiveEstimate>> want_est = (*fresh)->ActiveEstimates();
  Result<std::map<std::string, ActiveEstimate>> got_est = mirrored.ActiveEstimates();
  ASSERT_TRUE(want_est.ok() && got_est.ok());
  ASSERT_EQ(got_est->size(), want_est->size()) << "step " << step;
  for (const auto& [tenant, e] : *want_est) {
    EXPECT_EQ(got_est->at(tenant).all, e.all) << tenant;
    EXPECT_EQ(got_est->at(tenant).cloud, e.cloud) << tenant;
  }
  Result<std::vector<StateCount>> want_counts = (*fresh)->CountByState();
  Result<std::vector<StateCount>> got_counts = mirrored.CountByState();
  ASSERT_TRUE(want_counts.ok() && got_counts.ok());
  ASSERT_EQ(got_counts->size(), want_counts->size());
  for (size_t i = 0; i < want_counts->size(); ++i) {
    EXPECT_EQ((*got_counts)[i].oldest_submitted, (*want_counts)[i].oldest_submitted) << "step " << step;
  }
}

TEST(UnfinishedRows, AnswersWhatTheDatabaseHoldsAfterRandomWrites) {
  const std::string path = Db("random");
  Result<std::unique_ptr<Store>> opened = Store::Open(path);
  ASSERT_TRUE(opened.ok());
  Store& store = **opened;
  ASSERT_TRUE(store.ListUnfinished().ok());  // the mirror is loaded from here on
  std::mt19937 rng(11);
  const WorkloadState states[] = {WorkloadState::kQueued,   WorkloadState::kPlaced,    WorkloadState::kRunning,
                                  WorkloadState::kRequeued, WorkloadState::kPreempted, WorkloadState::kSucceeded,
                                  WorkloadState::kFailed,   WorkloadState::kCancelled, WorkloadState::kRejected};
  const char* currencies[] = {"EUR", "USD", ""};
  std::vector<std::string> uids;
  std::vector<WorkloadRecord> reused;
  int failed_writes = 0;
  for (int step = 0; step < 400; ++step) {
    const int op = static_cast<int>(rng() % 6);
    if (uids.empty() || op == 0) {
      WorkloadRecord r;
      r.name = "w" + std::to_string(rng() % 30);  // names repeat: some submissions are refused
      r.tenant = rng() % 2 ? "alpha" : "beta";
      r.source = "api";
      r.spec_text = "kind: Workload\nname: " + r.name;
      r.gpu_milli = static_cast<int64_t>(rng() % 8) * 500;
      r.estimate = Money(static_cast<int64_t>(rng() % 9000000), currencies[rng() % 3]);
      Result<WorkloadRecord> added = store.SubmitNumbered(r, Duration::FromSeconds(1000 - step));
      if (added.ok()) uids.push_back(added->uid);
    } else if (op == 1) {
      (void)store.RequestCancel(uids[rng() % uids.size()]);
    } else {
      Result<std::optional<WorkloadRecord>> current = store.GetByUid(uids[rng() % uids.size()]);
      ASSERT_TRUE(current.ok() && *current);
      WorkloadRecord next = **current;
      next.state = states[rng() % std::size(states)];
      next.attempt += static_cast<int>(rng() % 2);
      next.cluster = rng() % 2 ? "onprem" : "cloud";
      next.cloud = next.cluster == "cloud";
      next.estimate = Money(static_cast<int64_t>(rng() % 9000000), currencies[rng() % 3]);
      next.cost = Money(static_cast<int64_t>(rng() % 5000000), currencies[rng() % 3]);
      next.started = Duration::FromMillis(static_cast<int64_t>(rng() % 3) - 1);  // -1 reads back as 0
      next.updated_seq = 0;  // an update keeps the submission order whatever the caller sends
      next.cancel_requested = false;  // and never loses a cancel
      // A finished row made unfinished again may collide with a live row of its name (the
      // unique index refuses it): a failed write, which the mirror must not take either.
      if (op == 5) {
        ActionRow intent{"submit",     next.ActionKey(),     next.name, next.attempt,
                         next.cluster, ActionState::kIntent, "",        Duration::FromSeconds(step),
                         "{}"};
        if (!store.RecordIntentAndUpdate(intent, next, "placed", Duration::FromSeconds(step)).ok()) ++failed_writes;
      } else {
        if (!store.Update(next, "step", Duration::FromSeconds(step)).ok()) ++failed_writes;
      }
    }
    if (step % 25 == 24) ExpectSameAnswers(store, path, step, &reused);
  }
  ExpectSameAnswers(store, path, 400, &reused);
  EXPECT_GT(failed_writes, 0);  // the seed exercises writes the database refused
}

TEST(UnfinishedRows, AWriteThatFailsLeavesTheMirrorAsItWas) {
  const std::string path = Db("failed");
  Result<std::unique_ptr<Store>> opened = Store::Open(path);
  ASSERT_TRUE(opened.ok());
  Store& store = **opened;
  WorkloadRecord r;
  r.name = "a";
  r.uid = "a-u1";
  r.tenant = "t";
  ASSERT_TRUE(store.Submit(r, Duration()).ok());
  ASSERT_TRUE(store.ListUnfinished().ok());
  // A duplicate live name is refused inside its transaction; an unknown uid is NotFound.
  WorkloadRecord again = r;
  again.uid = "a-u2";
  EXPECT_EQ(store.Submit(again, Duration()).code(), StatusCode::kAlreadyExists);
  WorkloadRecord ghost = r;
  ghost.uid = "ghost";
  ghost.state = WorkloadState::kRunning;
  EXPECT_EQ(store.Update(ghost, "x", Duration()).code(), StatusCode::kNotFound);
  Result<std::vector<WorkloadRecord>> rows = store.ListUnfinished();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].uid, "a-u1");
  EXPECT_EQ((*rows)[0].state, WorkloadState::kPending);
  ExpectSameAnswers(store, path, 0);
}

TEST(UnfinishedRows, StoresRecordsAsTheDatabaseReadsThemBack) {
  WorkloadRecord r;
  r.estimate = Money(5, "EUR");
  r.cost = Money(7, "");
  r.finished = Duration::FromMillis(-3);
  WorkloadRecord stored = AsStored(r, 42);
  EXPECT_EQ(stored.estimate, Money(5, "EUR"));
  EXPECT_EQ(stored.cost, Money(7, "EUR"));  // one currency column: the estimate's when the cost has none
  EXPECT_EQ(stored.finished, Duration());
  EXPECT_EQ(stored.updated_seq, 42);
}

// SubmitNumbered's check (LiveNames, kept by the mirror): the live row of a tenant and
// name, gone once it finishes, a finished name free for a new row, and nothing known while
// the mirror is not loaded.
TEST(UnfinishedRows, KeepsTheLiveNamesOfItsRows) {
  LiveNames names;
  UnfinishedRows rows(&names);
  auto state_of = [&](const std::string& tenant, const std::string& name) {
    std::vector<std::optional<WorkloadState>> states;
    EXPECT_TRUE(names.Find({LiveNames::Key(tenant, name)}, &states));
    return states.at(0);
  };
  WorkloadRecord r;
  r.uid = "a-u1";
  r.tenant = "t";
  r.name = "a";
  r.state = WorkloadState::kPending;
  std::vector<std::optional<WorkloadState>> unknown;
  EXPECT_FALSE(names.Find({LiveNames::Key("t", "a")}, &unknown));  // not loaded
  rows.Load({AsStored(r, 1)});
  EXPECT_EQ(state_of("t", "a"), WorkloadState::kPending);
  EXPECT_EQ(state_of("other", "a"), std::nullopt);
  r.state = WorkloadState::kRunning;
  rows.Apply({AsStored(r, 1)});
  EXPECT_EQ(state_of("t", "a"), WorkloadState::kRunning);
  r.state = WorkloadState::kSucceeded;
  rows.Apply({AsStored(r, 1)});
  EXPECT_EQ(state_of("t", "a"), std::nullopt);
  r.uid = "a-u2";
  r.state = WorkloadState::kQueued;
  rows.Apply({AsStored(r, 2)});
  EXPECT_EQ(state_of("t", "a"), WorkloadState::kQueued);
  rows.Forget();
  EXPECT_FALSE(names.Find({LiveNames::Key("t", "a")}, &unknown));
  rows.Load({});
  EXPECT_EQ(state_of("t", "a"), std::nullopt);  // loaded and empty: free
}

}  // namespace
}  // namespace gpufed::store
