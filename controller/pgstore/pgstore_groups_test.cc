// A submission group's rows on both backends (store_rows.cc): a group is formed by holding
// the group ahead of it in the journal until every member waits, so its size is exact.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "controller/common/mutex.h"
#include "controller/pgstore/testing/both_backends.h"

namespace gpufed::pgstore {
namespace {

class StoreGroups : public testing::BothBackends {};
INSTANTIATE_TEST_SUITE_P(Store, StoreGroups, testing::EachBackend(), testing::BackendName);

using store::Store;
using store::WorkloadRecord;
using store::WorkloadState;
using testing::Backend;
using testing::Record;

// What SubmitAsOneGroup saw: each submission's answer ("first" at 0) and the size of each
// group the journal was given.
struct GroupRun {
  std::vector<Result<WorkloadRecord>> results;
  std::vector<size_t> groups;
};

// Submits "first" (tenant alpha) alone and holds its group in the journal until every one
// of `rest` waits in the queue, so that they are the next group, whole.
GroupRun SubmitAsOneGroup(Store& store, const std::vector<WorkloadRecord>& rest) {
  GroupRun run;
  run.results.assign(rest.size() + 1, Status(StatusCode::kInternal, "not run"));
  Mutex mu;
  std::atomic<bool> first_in_journal{false};
  store.SetSubmissionJournal([&](const std::vector<store::AcceptedSubmission>& accepted, const store::RidingWrites&) {
    bool first = false;
    {
      MutexLock lock(mu);
      run.groups.push_back(accepted.size());
      first = run.groups.size() == 1;
    }
    if (first) {
      first_in_journal = true;
      while (store.queued_submissions() < rest.size()) std::this_thread::yield();
    }
    return Status::Ok();
  });
  std::vector<std::thread> threads;
  threads.emplace_back(
      [&] { run.results[0] = store.SubmitNumbered(Record("first", "alpha"), Duration::FromSeconds(1)); });
  while (!first_in_journal) std::this_thread::yield();
  for (size_t i = 0; i < rest.size(); ++i) {
    threads.emplace_back([&, i] { run.results[i + 1] = store.SubmitNumbered(rest[i], Duration::FromSeconds(2)); });
  }
  for (std::thread& t : threads) t.join();
  store.SetSubmissionJournal(nullptr);
  return run;
}

// A group of a hundred: its rows go in INSERTs of up to 64 rows (store_rows.cc), and on
// PostgreSQL the totals are kept once per INSERT (migration 9).
TEST_P(StoreGroups, AGroupOfAHundredIsStoredWholeWithItsHistoryAndTotals) {
  constexpr size_t kQueued = 100;
  auto store = Open();
  ASSERT_NE(store, nullptr);
  std::vector<WorkloadRecord> rest;
  rest.reserve(kQueued);
  for (size_t i = 1; i <= kQueued; ++i) {
    WorkloadRecord r = Record("w" + std::to_string(i), i % 3 == 0 ? "beta" : "alpha");
    r.gpu_milli = static_cast<int64_t>(i) * 250;
    rest.push_back(r);
  }
  const GroupRun run = SubmitAsOneGroup(*store, rest);
  const std::vector<Result<WorkloadRecord>>& results = run.results;
  EXPECT_EQ(run.groups, (std::vector<size_t>{1, kQueued}));

  std::map<std::string, std::pair<int64_t, int64_t>> expected;  // tenant -> (workloads, gpu_milli)
  std::set<std::string> uids;
  for (const Result<WorkloadRecord>& r : results) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(uids.insert(r->uid).second) << r->uid;
    expected[r->tenant].first += 1;
    expected[r->tenant].second += r->gpu_milli;
  }
  store.reset();
  auto reopened = Open();
  ASSERT_NE(reopened, nullptr);
  for (const Result<WorkloadRecord>& r : results) {
    auto row = reopened->GetByUid(r->uid);
    ASSERT_TRUE(row.ok() && row->has_value()) << r->uid;
    EXPECT_EQ((*row)->name, r->name);
    EXPECT_EQ((*row)->tenant, r->tenant);
    EXPECT_EQ((*row)->gpu_milli, r->gpu_milli);
    EXPECT_EQ((*row)->state, WorkloadState::kPending);
    auto history = reopened->History(r->uid);
    ASSERT_TRUE(history.ok());
    ASSERT_EQ(history->size(), 1u) << r->uid;
    EXPECT_EQ((*history)[0].to, "Pending");
    EXPECT_EQ((*history)[0].reason, "submitted (api)");
  }
  auto counts = reopened->CountByState();
  ASSERT_TRUE(counts.ok());
  std::map<std::string, std::pair<int64_t, int64_t>> got;
  for (const store::StateCount& c : *counts) {
    if (c.workloads == 0) continue;
    EXPECT_EQ(c.state, WorkloadState::kPending);
    got[c.tenant].first += c.workloads;
    got[c.tenant].second += c.gpu_milli;
  }
  EXPECT_EQ(got, expected);
}

// One row of a group that PostgreSQL cannot hold (a NUL byte) fails that submission alone,
// with the text's own error: the group's INSERT is undone to its savepoint and its rows are
// written again one by one. The others are stored and counted.
TEST_P(StoreGroups, ARowOfAGroupThatCannotBeStoredFailsAloneAndTheRestAreStored) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  std::vector<WorkloadRecord> rest;
  rest.reserve(20);
  for (int i = 0; i < 20; ++i) rest.push_back(Record("w" + std::to_string(i), "alpha"));
  rest[7].spec_text = std::string("kind: Workload\0tail", 19);
  const GroupRun run = SubmitAsOneGroup(*store, rest);
  EXPECT_EQ(run.groups, (std::vector<size_t>{1, 20}));
  int64_t stored = 0;
  for (size_t i = 0; i < run.results.size(); ++i) {
    const Result<WorkloadRecord>& r = run.results[i];
    if (i == 8 && GetParam() == Backend::kPostgres) {
      ASSERT_FALSE(r.ok());
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
      EXPECT_NE(r.status().message().find("NUL byte"), std::string::npos) << r.status().message();
      continue;
    }
    ASSERT_TRUE(r.ok()) << i << ": " << r.status().ToString();
    ++stored;
    auto row = store->GetByUid(r->uid);
    ASSERT_TRUE(row.ok() && row->has_value()) << r->uid;
  }
  EXPECT_EQ(stored, GetParam() == Backend::kPostgres ? 20 : 21);
  auto counts = store->CountByState();
  ASSERT_TRUE(counts.ok());
  int64_t counted = 0;
  for (const store::StateCount& c : *counts) counted += c.workloads;
  EXPECT_EQ(counted, stored);
  auto listed = store->List("alpha");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(static_cast<int64_t>(listed->size()), stored);
}

// A group of large bodies (a raised --max-body) is split by its text (insert_batches.h):
// twelve specs of 1 MiB go in INSERTs of at most 8 MiB, and every byte is stored.
TEST_P(StoreGroups, AGroupOfLargeSpecsIsSplitByItsBytesAndStoredWhole) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  std::vector<WorkloadRecord> rest;
  rest.reserve(12);
  for (int i = 0; i < 12; ++i) {
    WorkloadRecord r = Record("big" + std::to_string(i), "alpha");
    r.spec_text = "kind: Workload\n# " + std::string((size_t{1} << 20) - 17, static_cast<char>('a' + i));
    rest.push_back(r);
  }
  const GroupRun run = SubmitAsOneGroup(*store, rest);
  EXPECT_EQ(run.groups, (std::vector<size_t>{1, 12}));
  for (size_t i = 1; i < run.results.size(); ++i) {
    ASSERT_TRUE(run.results[i].ok()) << run.results[i].status().ToString();
    auto row = store->GetByUid(run.results[i]->uid);
    ASSERT_TRUE(row.ok() && row->has_value());
    EXPECT_EQ((*row)->spec_text, rest[i - 1].spec_text) << i;
  }
}

}  // namespace
}  // namespace gpufed::pgstore
