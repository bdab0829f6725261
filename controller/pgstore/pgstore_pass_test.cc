// A pass's changes on both backends (store.cc, store_rows.cc): many rows changed in one
// call go as few UPDATEs and history INSERTs as insert_batches.h allows, and on
// PostgreSQL the totals move once per UPDATE (migration 10). Whatever the batch, the
// rows, their history and the totals must read as if each change had been written alone.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "controller/pgstore/testing/both_backends.h"

namespace gpufed::pgstore {
namespace {

class StorePass : public testing::BothBackends {};
INSTANTIATE_TEST_SUITE_P(Store, StorePass, testing::EachBackend(), testing::BackendName);

using store::Store;
using store::WorkloadRecord;
using store::WorkloadState;
using testing::Record;

// (tenant, state) -> (workloads, cost, GPUs), zero keys left out.
using Totals = std::map<std::pair<std::string, std::string>, std::tuple<int64_t, int64_t, int64_t>>;

Totals Counted(Store& store) {
  Totals out;
  Result<std::vector<store::StateCount>> counts = store.CountByState();
  EXPECT_TRUE(counts.ok()) << counts.status().ToString();
  if (!counts.ok()) return out;
  for (const store::StateCount& c : *counts) {
    auto& t = out[{c.tenant, store::StateName(c.state)}];
    std::get<0>(t) += c.workloads;
    std::get<1>(t) += c.cost.micros();
    std::get<2>(t) += c.gpu_milli;
  }
  std::erase_if(out, [](const auto& kv) { return kv.second == std::make_tuple(0, 0, 0); });
  return out;
}

Totals Recounted(const std::map<std::string, WorkloadRecord>& rows) {
  Totals out;
  for (const auto& [uid, r] : rows) {
    auto& t = out[{r.tenant, store::StateName(r.state)}];
    std::get<0>(t) += 1;
    std::get<1>(t) += r.cost.micros();
    std::get<2>(t) += r.gpu_milli;
  }
  return out;
}

// Random passes of 1-150 changes (more than one statement's 64 rows, and powers of two
// that are not), some changing a row twice or not at all: after each, every row, the
// totals and the history read as the changes say.
TEST_P(StorePass, APassOfManyChangesReadsAsIfEachWereWrittenAlone) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  std::mt19937 rng(23);
  std::map<std::string, WorkloadRecord> rows;  // by uid, as they should read
  std::map<std::string, std::vector<std::string>> history;  // uid -> to_state, in order
  for (int i = 0; i < 120; ++i) {
    WorkloadRecord r = Record("w" + std::to_string(i), i % 3 == 0 ? "beta" : "alpha");
    r.gpu_milli = int64_t{250} * (1 + i % 4);
    Result<WorkloadRecord> added = store->SubmitNumbered(r, Duration::FromSeconds(1));
    ASSERT_TRUE(added.ok()) << added.status().ToString();
    rows[added->uid] = *added;
    history[added->uid].emplace_back("Pending");
  }
  std::vector<std::string> uids;
  uids.reserve(rows.size());
  for (const auto& [uid, r] : rows) uids.push_back(uid);
  const WorkloadState states[] = {WorkloadState::kQueued, WorkloadState::kPlaced, WorkloadState::kRunning,
                                  WorkloadState::kRequeued, WorkloadState::kSucceeded};
  for (int pass = 0; pass < 12; ++pass) {
    std::vector<Store::WorkloadUpdate> updates;
    const size_t n = 1 + rng() % 150;
    for (size_t k = 0; k < n; ++k) {
      WorkloadRecord& r = rows[uids[rng() % uids.size()]];
      WorkloadRecord next = r;
      const WorkloadState before = next.state;
      switch (rng() % 4) {
        case 0: break;  // written unchanged
        case 1: next.cost = Money(static_cast<int64_t>(rng() % 900000), "EUR"); break;
        default: next.state = states[rng() % 5]; break;
      }
      next.cluster = "c" + std::to_string(rng() % 3);
      next.reason = "pass " + std::to_string(pass);
      if (next.state != before) history[r.uid].emplace_back(store::StateName(next.state));
      updates.push_back({next, "pass " + std::to_string(pass), std::nullopt});
      r = next;
    }
    ASSERT_TRUE(store->RecordIntentsAndUpdates({}, updates, Duration::FromSeconds(10 + pass)).ok());
    EXPECT_EQ(Counted(*store), Recounted(rows)) << "after pass " << pass << " of " << n << " changes";
  }
  for (const auto& [uid, want] : rows) {
    Result<std::optional<WorkloadRecord>> got = store->GetByUid(uid);
    ASSERT_TRUE(got.ok() && got->has_value()) << uid;
    EXPECT_EQ((*got)->state, want.state) << uid;
    EXPECT_EQ((*got)->cluster, want.cluster) << uid;
    EXPECT_EQ((*got)->cost.micros(), want.cost.micros()) << uid;
    EXPECT_EQ((*got)->name, want.name) << uid;
    Result<std::vector<store::Transition>> h = store->History(uid);
    ASSERT_TRUE(h.ok());
    std::vector<std::string> to;
    for (const store::Transition& t : *h) to.push_back(t.to);
    EXPECT_EQ(to, history[uid]) << uid;
  }
  // The totals were kept, not recomputed: a store opened again reads the same.
  store.reset();
  auto again = Open();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(Counted(*again), Recounted(rows));
}

// A change of a workload the database does not have fails the pass and writes nothing.
TEST_P(StorePass, APassNamingAnUnknownWorkloadWritesNothing) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  Result<WorkloadRecord> a = store->SubmitNumbered(Record("a", "alpha"), Duration::FromSeconds(1));
  ASSERT_TRUE(a.ok());
  WorkloadRecord placed = *a;
  placed.state = WorkloadState::kPlaced;
  WorkloadRecord ghost = Record("ghost", "alpha");
  ghost.uid = "ghost-u99";
  ghost.state = WorkloadState::kRunning;
  Status s = store->RecordIntentsAndUpdates({}, {{placed, "placed", std::nullopt}, {ghost, "?", std::nullopt}},
                                            Duration::FromSeconds(2));
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  Result<std::optional<WorkloadRecord>> got = store->GetByUid(a->uid);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->state, WorkloadState::kPending);
  EXPECT_EQ(Counted(*store), (Totals{{{"alpha", "Pending"}, {1, 0, a->gpu_milli}}}));
}

}  // namespace
}  // namespace gpufed::pgstore
