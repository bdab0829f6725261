// A leader's Store on PostgreSQL has two sessions (runtime/app.cc): the loop's, and one of
// their own for API submissions' group commits (Store::OpenOn's `submissions`). What that
// must not change: a name is live from its commit on, the mirror the passes read matches
// the database, and the totals are the same sums. What it must change: a submission does
// not wait for a transaction of the loop's, even one holding its tenant's totals.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "controller/pg/testing/pg_test_server.h"
#include "controller/pgstore/connection.h"
#include "controller/store/store.h"
#include "controller/store/test_records.h"

namespace gpufed::pgstore {
namespace {

using store::Store;
using store::WorkloadRecord;
using store::WorkloadState;

class PgSessions : public pg::testing::PgTest {
 protected:
  std::unique_ptr<store::Connection> Session(const std::string& writer) {
    Result<std::unique_ptr<PgConnection>> c = PgConnection::Adopt(Connect(), false, writer);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }
  std::unique_ptr<Store> Open() {
    Result<std::unique_ptr<Store>> store = Store::OpenOn(Session("loop"), Session("api"));
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }
};

WorkloadRecord Record(const std::string& tenant, const std::string& name) {
  return store::testing::ApiSubmission(tenant, name);
}

TEST_F(PgSessions, ASubmissionDoesNotWaitForTheLoopsTransactionOnItsTenantsTotals) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  Result<WorkloadRecord> held = store->SubmitNumbered(Record("t", "held"), Duration::FromSeconds(1));
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  // A transaction of the loop's kind (writer "loop") moves t's workload out of Pending and
  // stays open: it holds the loop's state_totals rows of (t, Pending) and (t, Queued).
  std::unique_ptr<pg::Connection> loop = Connect();
  ASSERT_TRUE(loop->Exec("name", "SELECT set_config('gpufed.writer', 'loop', false)").ok());
  ASSERT_TRUE(loop->Exec("begin", "BEGIN").ok());
  ASSERT_TRUE(loop->Exec("move", "UPDATE workloads SET state = 'Queued' WHERE uid = $1", {held->uid}).ok());
  // A new Pending workload of t commits meanwhile: its totals rows are the API's. (With one
  // writer for both it waited for the loop's COMMIT: here, for ever.)
  Result<WorkloadRecord> next = store->SubmitNumbered(Record("t", "next"), Duration::FromSeconds(2));
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  ASSERT_TRUE(loop->Exec("commit", "COMMIT").ok());
  // The totals are the sums over both writers' rows.
  Result<std::vector<store::StateCount>> counts = store->CountByState();
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  std::map<WorkloadState, int64_t> by_state;
  for (const store::StateCount& c : *counts) by_state[c.state] += c.workloads;
  EXPECT_EQ(by_state, (std::map<WorkloadState, int64_t>{{WorkloadState::kPending, 1}, {WorkloadState::kQueued, 1}}));
  auto writers = Connect()->Exec("writers", "SELECT DISTINCT writer FROM state_totals ORDER BY writer");
  ASSERT_TRUE(writers.ok()) << writers.status().ToString();
  ASSERT_EQ(writers->size(), 2u);
  EXPECT_EQ(*writers->Text(0, "writer"), "api");
  EXPECT_EQ(*writers->Text(1, "writer"), "loop");
}

// A name committed on the submissions' session is live at once: before the mirror has its
// row (refused as in flight), once it has (refused as live), and free when it finishes.
TEST_F(PgSessions, ANameIsLiveFromItsCommitUntilItFinishes) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  Result<WorkloadRecord> first = store->SubmitNumbered(Record("t", "a"), Duration::FromSeconds(1));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<WorkloadRecord> twin = store->SubmitNumbered(Record("t", "a"), Duration::FromSeconds(1));
  EXPECT_EQ(twin.status().code(), StatusCode::kAlreadyExists) << twin.status().ToString();
  Result<std::vector<WorkloadRecord>> unfinished = store->ListUnfinished();
  ASSERT_TRUE(unfinished.ok() && unfinished->size() == 1u);
  EXPECT_EQ((*unfinished)[0].uid, first->uid);
  WorkloadRecord running = (*unfinished)[0];
  running.state = WorkloadState::kRunning;
  ASSERT_TRUE(store->Update(running, "started", Duration::FromSeconds(2)).ok());
  twin = store->SubmitNumbered(Record("t", "a"), Duration::FromSeconds(3));
  EXPECT_EQ(twin.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(twin.status().message().find("Running"), std::string::npos) << twin.status().ToString();
  EXPECT_TRUE(store->SubmitNumbered(Record("u", "a"), Duration::FromSeconds(3)).ok());  // another tenant's name
  running.state = WorkloadState::kSucceeded;
  ASSERT_TRUE(store->Update(running, "done", Duration::FromSeconds(4)).ok());
  Result<WorkloadRecord> again = store->SubmitNumbered(Record("t", "a"), Duration::FromSeconds(5));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_NE(again->uid, first->uid);
}

// Submitters on the submissions' session and a loop on its own, at once, over a small
// pool of names (so names collide, finish and are reused): every acknowledged submission
// is stored, and the mirror the loop reads ends equal to the database.
TEST_F(PgSessions, SubmittersAndALoopAtOnceLeaveTheMirrorEqualToTheDatabase) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  constexpr int kSubmitters = 4;
  constexpr int kPerSubmitter = 60;
  std::atomic<bool> submitting{true};
  std::vector<std::vector<std::string>> acknowledged(kSubmitters);
  std::vector<std::thread> submitters;
  submitters.reserve(kSubmitters);
  for (int t = 0; t < kSubmitters; ++t) {
    submitters.emplace_back([&, t] {
      std::mt19937 random(static_cast<unsigned>(t + 1));
      for (int i = 0; i < kPerSubmitter; ++i) {
        Result<WorkloadRecord> r = store->SubmitNumbered(
            Record(t % 2 == 0 ? "even" : "odd", "n" + std::to_string(random() % 12)), Duration::FromSeconds(i));
        if (r.ok()) {
          acknowledged[t].push_back(r->uid);
        } else {
          EXPECT_EQ(r.status().code(), StatusCode::kAlreadyExists) << r.status().ToString();
        }
      }
    });
  }
  std::thread loop([&] {
    std::mt19937 random(99);
    int passes = 0;
    while (submitting.load() || passes < 3) {
      ++passes;
      Result<std::vector<WorkloadRecord>> rows = store->ListUnfinished();
      ASSERT_TRUE(rows.ok()) << rows.status().ToString();
      std::vector<Store::WorkloadUpdate> updates;
      for (WorkloadRecord r : *rows) {
        if (random() % 3 != 0) continue;
        r.state = r.state == WorkloadState::kPending ? WorkloadState::kQueued : WorkloadState::kSucceeded;
        updates.push_back({r, "pass " + std::to_string(passes), std::nullopt});
      }
      ASSERT_TRUE(store->RecordIntentsAndUpdates({}, updates, Duration::FromSeconds(passes)).ok());
    }
  });
  for (std::thread& t : submitters) t.join();
  submitting = false;
  loop.join();

  std::set<std::string> stored;
  Result<std::vector<WorkloadRecord>> all = store->List();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  for (const WorkloadRecord& r : *all) stored.insert(r.uid);
  for (const std::vector<std::string>& uids : acknowledged) {
    for (const std::string& uid : uids) EXPECT_EQ(stored.count(uid), 1u) << uid;
  }
  // The mirror against a fresh Store's read of the database.
  Result<std::vector<WorkloadRecord>> mirrored = store->ListUnfinished();
  auto fresh = Open();
  ASSERT_NE(fresh, nullptr);
  Result<std::vector<WorkloadRecord>> read = fresh->ListUnfinished();
  ASSERT_TRUE(mirrored.ok() && read.ok());
  ASSERT_EQ(mirrored->size(), read->size());
  for (size_t i = 0; i < read->size(); ++i) {
    EXPECT_EQ((*mirrored)[i].uid, (*read)[i].uid);
    EXPECT_EQ((*mirrored)[i].state, (*read)[i].state) << (*read)[i].uid;
    EXPECT_EQ((*mirrored)[i].updated_seq, (*read)[i].updated_seq) << (*read)[i].uid;
  }
  // And the totals against the rows.
  Result<std::vector<store::StateCount>> counts = store->CountByState();
  ASSERT_TRUE(counts.ok());
  std::map<std::pair<std::string, WorkloadState>, int64_t> counted, expected;
  for (const store::StateCount& c : *counts) counted[{c.tenant, c.state}] += c.workloads;
  for (const WorkloadRecord& r : *all) ++expected[{r.tenant, r.state}];
  EXPECT_EQ(counted, expected);
}

}  // namespace
}  // namespace gpufed::pgstore
