// Two Stores writing one PostgreSQL database, as two replicas would, and what one group of
// submissions costs in round trips (counted by the pg layer, never timed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "controller/pg/testing/pg_test_server.h"
#include "controller/pgstore/connection.h"
#include "controller/store/store.h"

namespace gpufed::pgstore {
namespace {

using store::Store;
using store::WorkloadRecord;
using store::WorkloadState;
using PgWriters = pg::testing::PgTest;

WorkloadRecord Record(const std::string& name) {
  WorkloadRecord r;
  r.name = name;
  r.tenant = "t";
  r.source = "api";
  r.spec_text = "kind: Workload";
  return r;
}

std::unique_ptr<Store> OpenOn(Result<std::unique_ptr<PgConnection>> c) {
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  if (!c.ok()) return nullptr;
  auto store = Store::OpenOn(std::move(c).value());
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

// N of `<name>-u<N>`.
int64_t UidNumber(const std::string& uid) {
  static const std::regex kNumber(".*-u([0-9]+)$");
  std::smatch m;
  return std::regex_match(uid, m, kNumber) ? std::stoll(m[1].str()) : -1;
}

// Submits until stored: Aborted means another Store took numbers first (submit again).
Result<WorkloadRecord> SubmitUntilStored(Store& store, const std::string& name, int64_t at) {
  while (true) {
    Result<WorkloadRecord> r = store.SubmitNumbered(Record(name), Duration::FromSeconds(at));
    if (r.ok() || r.status().code() != StatusCode::kAborted) return r;
  }
}

// Each Store keeps its uid counter in memory, read from the database at its first numbered
// submission; the counter in the database is compared and set with each group (store_submit.cc),
// so a Store whose counter is behind another's has its group refused (Aborted) and reads
// the counter again: no number is ever given twice, whatever the names. (Before, both
// handed out the same numbers under different names: b-u2 and c-u2.)
TEST_F(PgWriters, TwoStoresOnOneDatabaseNeverHandOutOneUidNumberTwice) {
  auto first = OpenOn(PgConnection::Adopt(Connect(), false));
  auto second = OpenOn(PgConnection::Adopt(Connect(), false));
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  Result<WorkloadRecord> a = first->SubmitNumbered(Record("a"), Duration::FromSeconds(1));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->uid, "a-u1");
  // The second reads the counter the first committed.
  Result<WorkloadRecord> b = second->SubmitNumbered(Record("b"), Duration::FromSeconds(2));
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->uid, "b-u2");
  // The first's counter (1) is behind the database's (2): refused, nothing written.
  Result<WorkloadRecord> c = first->SubmitNumbered(Record("c"), Duration::FromSeconds(3));
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kAborted) << c.status().ToString();
  EXPECT_THAT(c.status().message(), ::testing::HasSubstr("submit it again"));
  // Submitted again, it reads the counter and takes the next number.
  c = first->SubmitNumbered(Record("c"), Duration::FromSeconds(3));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->uid, "c-u3");
  Result<WorkloadRecord> d = SubmitUntilStored(*second, "d", 4);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->uid, "d-u4");
  // One name: a live one refuses the other Store's submission, and a finished one frees it.
  WorkloadRecord done = *c;
  done.state = WorkloadState::kSucceeded;
  ASSERT_TRUE(first->Update(done, "done", Duration::FromSeconds(5)).ok());
  Result<WorkloadRecord> again = SubmitUntilStored(*second, "c", 6);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  Result<WorkloadRecord> twin = SubmitUntilStored(*first, "c", 6);
  ASSERT_FALSE(twin.ok());
  EXPECT_EQ(twin.status().code(), StatusCode::kAlreadyExists) << twin.status().ToString();
  auto rows = Connect()->Exec("count",
                              "SELECT count(*) AS n, count(DISTINCT substring(uid from '-u([0-9]+)$')) AS numbers, "
                              "max(substring(uid from '-u([0-9]+)$')::bigint) AS top FROM workloads");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows->Int64(0, "n"), 5);
  EXPECT_EQ(*rows->Int64(0, "numbers"), 5);
  auto counter = Connect()->Exec("read the counter", "SELECT value FROM meta WHERE key = 'uid_counter'");
  ASSERT_TRUE(counter.ok());
  // Never behind a stored number (past it by the twin's: the second Store's row is not in
  // the first's mirror, so the twin was numbered, then refused by the index at its INSERT).
  EXPECT_GE(std::stoll(*counter->Text(0, "value")), *rows->Int64(0, "top"));
}

// Both Stores submitting at once from two threads each: every stored number is distinct.
TEST_F(PgWriters, TwoStoresSubmittingAtOnceGiveDistinctNumbers) {
  auto first = OpenOn(PgConnection::Adopt(Connect(), false));
  auto second = OpenOn(PgConnection::Adopt(Connect(), false));
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  constexpr int kPerThread = 40;
  std::vector<std::vector<std::string>> uids(4);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Store& store = t % 2 == 0 ? *first : *second;
      for (int i = 0; i < kPerThread; ++i) {
        Result<WorkloadRecord> r = SubmitUntilStored(store, "w" + std::to_string(t) + "-" + std::to_string(i), i);
        EXPECT_TRUE(r.ok()) << r.status().ToString();
        if (r.ok()) uids[static_cast<size_t>(t)].push_back(r->uid);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<int64_t> numbers;
  size_t stored = 0;
  for (const auto& list : uids) {
    for (const std::string& uid : list) {
      numbers.insert(UidNumber(uid));
      ++stored;
    }
  }
  EXPECT_EQ(stored, 4U * kPerThread);
  EXPECT_EQ(numbers.size(), stored);
  auto rows = Connect()->Exec("count", "SELECT count(*) AS n FROM workloads");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows->Int64(0, "n"), 4 * kPerThread);
}

// A submission alone in its group: BEGIN, the savepoint, both rows and the counter in one
// exchange, the release with COMMIT. (Before: a numbering SELECT, BEGIN, SAVEPOINT, the
// SELECT again, two INSERTs, RELEASE, the counter and COMMIT, each a round trip: 9; then
// 3, with the counter sent ahead of the rows.)
TEST_F(PgWriters, ASubmissionAloneInItsGroupTakesTwoRoundTrips) {
  auto adopted = PgConnection::Adopt(Connect(), false);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  const pg::Connection& wire = (*adopted)->connection();
  auto store = OpenOn(std::move(adopted));
  ASSERT_NE(store, nullptr);
  // The first reads the counter and the unfinished rows, and prepares its statements.
  ASSERT_TRUE(store->SubmitNumbered(Record("a"), Duration::FromSeconds(1)).ok());
  for (int i = 0; i < 3; ++i) {
    const uint64_t before = wire.round_trips();
    Result<WorkloadRecord> r = store->SubmitNumbered(Record("b" + std::to_string(i)), Duration::FromSeconds(2));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(wire.round_trips() - before, 2U) << i;
  }
  auto rows = Connect()->Exec("count", "SELECT count(*) AS n FROM status_history");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows->Int64(0, "n"), 4);
}

}  // namespace
}  // namespace gpufed::pgstore
