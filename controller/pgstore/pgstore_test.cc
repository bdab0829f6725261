// The Store on both backends: each TEST_P runs once on SQLite (a file) and once on a real
// PostgreSQL 15 (testing/both_backends.h), so a behaviour that differs between the engines
// fails here; a submission group's rows are pgstore_groups_test.cc's. The TEST_Fs are
// PostgreSQL's own: two Stores on one database, the schema's version and its migration
// from 8, refusals of text PostgreSQL cannot hold, round-trips.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <tuple>

#include "controller/pg/testing/pg_test_server.h"
#include "controller/pgstore/connection.h"
#include "controller/pgstore/testing/both_backends.h"
#include "controller/store/schema.h"
#include "controller/store/store.h"

namespace gpufed::pgstore {
namespace {

using store::Store;
using store::WorkloadRecord;
using store::WorkloadState;
using testing::Backend;
using testing::BothBackends;
using testing::Record;

INSTANTIATE_TEST_SUITE_P(Store, BothBackends, testing::EachBackend(), testing::BackendName);

TEST_P(BothBackends, MigratesANewDatabaseToTheLatestSchemaAndReopens) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->schema_version(), Store::LatestSchemaVersion());
  store.reset();
  auto again = Open();
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->schema_version(), Store::LatestSchemaVersion());
}

TEST_P(BothBackends, SubmitsUpdatesAndReadsBack) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  Result<WorkloadRecord> a = store->SubmitNumbered(Record("train", "alpha"), Duration::FromSeconds(1));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->uid, "train-u1");
  Result<WorkloadRecord> b = store->SubmitNumbered(Record("train", "beta"), Duration::FromSeconds(2));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->uid, "train-u2");
  Result<WorkloadRecord> twin = store->SubmitNumbered(Record("train", "alpha"), Duration::FromSeconds(3));
  EXPECT_EQ(twin.status().code(), StatusCode::kAlreadyExists);

  WorkloadRecord next = *a;
  next.state = WorkloadState::kRunning;
  next.cluster = "c1";
  next.cost = Money(std::numeric_limits<int64_t>::max(), "EUR");
  ASSERT_TRUE(store->Update(next, "placed", Duration::FromSeconds(4)).ok());
  store.reset();

  auto reopened = Open();
  ASSERT_NE(reopened, nullptr);
  auto got = reopened->GetByUid("train-u1");
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status().ToString();
  EXPECT_EQ((*got)->state, WorkloadState::kRunning);
  EXPECT_EQ((*got)->cluster, "c1");
  EXPECT_EQ((*got)->cost.micros(), std::numeric_limits<int64_t>::max());
  auto history = reopened->History("train-u1");
  ASSERT_TRUE(history.ok());
  EXPECT_FALSE(history->empty());
  auto unfinished = reopened->ListUnfinished();
  ASSERT_TRUE(unfinished.ok());
  EXPECT_EQ(unfinished->size(), 2u);
  auto third = reopened->SubmitNumbered(Record("eval", "alpha"), Duration::FromSeconds(5));
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->uid, "eval-u3");
}

TEST_P(BothBackends, ActionsAttemptsDecisionsAndMeta) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  store::ActionRow row{"submit", "a-u1.a1", "a", 1, "c1", store::ActionState::kIntent, "", {}, "{\"v\":1}"};
  ASSERT_TRUE(store->RecordActionIntent(row).ok());
  row.payload = "{\"v\":2}";
  ASSERT_TRUE(store->RecordActionIntent(row).ok());  // recorded once: the first stays
  auto action = store->GetAction("submit", "a-u1.a1");
  ASSERT_TRUE(action.ok() && action->has_value());
  EXPECT_EQ((*action)->payload, "{\"v\":1}");
  EXPECT_EQ(store->MarkAction("cancel", "zzz", store::ActionState::kApplied, "").code(), StatusCode::kNotFound);

  auto mark = store->Mark();
  ASSERT_TRUE(mark.ok());
  store::AttemptRow a{
      "w", 1, "t", "cloud", "succeeded", 3600.25, Money(5000000, "EUR"), true, {}, Duration::FromSeconds(60), "w-u1"};
  ASSERT_TRUE(store->FinishAttempt(a).ok());
  ASSERT_TRUE(store->FinishAttempt(a).ok());  // booked once
  auto usage = store->Usage();
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->at("t").spent, Money(5000000, "EUR"));
  EXPECT_EQ(usage->at("t").gpu_seconds, 3600.25);
  auto after = store->AttemptsAfter(*mark);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->size(), 1u);
  auto days = store->MeteredDays(Duration());
  ASSERT_TRUE(days.ok());
  ASSERT_EQ(days->size(), 1u);
  EXPECT_EQ((*days)[0].cloud_spent, Money(5000000, "EUR"));

  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        store->RecordDecision({0, {}, "w", 1, "rev", "queued", "", "r" + std::to_string(i), "{}", "t", "w-u1"}).ok());
  }
  auto decisions = store->Decisions("t", "w", 2);
  ASSERT_TRUE(decisions.ok());
  ASSERT_EQ(decisions->size(), 2u);
  EXPECT_EQ((*decisions)[0].reason, "r2");

  ASSERT_TRUE(store->SetMeta("clock", "123").ok());
  auto meta = store->GetMeta("clock");
  ASSERT_TRUE(meta.ok() && meta->has_value());
  EXPECT_EQ(**meta, "123");
}

TEST_P(BothBackends, ListsHistoryDeferredWritesAndMarks) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  auto mark = store->Mark();
  ASSERT_TRUE(mark.ok());
  for (const char* tenant : {"alpha", "beta"}) {
    WorkloadRecord r = Record("train", tenant);
    r.estimate = Money(2500000, "EUR");
    Result<WorkloadRecord> added = store->SubmitNumbered(r, Duration::FromSeconds(1));
    ASSERT_TRUE(added.ok()) << added.status().ToString();
    WorkloadRecord running = *added;
    running.state = WorkloadState::kRunning;
    running.cluster = "c1";
    ASSERT_TRUE(store->Update(running, "started", Duration::FromSeconds(2)).ok());
  }
  ASSERT_TRUE(store->RequestCancel("train-u1").ok());
  auto found = store->FindByName("train");
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->size(), 2u);
  auto listed = store->List("beta");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].uid, "train-u2");
  auto cancelled = store->GetByUid("train-u1");
  ASSERT_TRUE(cancelled.ok() && cancelled->has_value());
  EXPECT_TRUE((*cancelled)->cancel_requested);
  auto estimates = store->ActiveEstimates();
  ASSERT_TRUE(estimates.ok());
  EXPECT_EQ(estimates->at("alpha").all, Money(2500000, "EUR"));
  auto transitions = store->TransitionsAfter(*mark);
  ASSERT_TRUE(transitions.ok());
  EXPECT_EQ(transitions->entered["Running"], 2);

  store->SetMetaLater("clock", "42");
  store->RecordDecisionLater({0, {}, "train", 1, "rev", "placed", "c1", "fits", "{}", "alpha", "train-u1"});
  EXPECT_EQ(**store->GetMeta("clock"), "42");  // read where it waits
  ASSERT_TRUE(store->Flush().ok());
  EXPECT_EQ(store->Decisions("alpha", "train")->size(), 1u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(
        store->AppendHistory(Duration::FromSeconds(i), "{\"i\":" + std::to_string(i) + "}", Duration::FromSeconds(1))
            .ok());
  }
  auto samples = store->ReadHistory(Duration());
  ASSERT_TRUE(samples.ok());
  ASSERT_EQ(samples->size(), 2u);  // the sample before keep_from was pruned
  EXPECT_EQ((*samples)[1].second, "{\"i\":2}");
}

// The same random operations on both engines give the same totals (the SQLite triggers
// and the plpgsql functions), and both equal a count kept here.
TEST_P(BothBackends, TriggerKeptTotalsFollowEveryWrite) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  std::mt19937 rng(7);
  std::vector<WorkloadRecord> live;
  std::map<std::tuple<std::string, std::string>, std::pair<int64_t, int64_t>> expected;
  auto count = [&](const WorkloadRecord& r, int sign) {
    auto& e = expected[{r.tenant, store::StateName(r.state)}];
    e.first += sign;
    e.second += sign * r.cost.micros();
  };
  const WorkloadState states[] = {WorkloadState::kQueued,    WorkloadState::kPlaced, WorkloadState::kRunning,
                                  WorkloadState::kSucceeded, WorkloadState::kFailed, WorkloadState::kRequeued};
  for (int step = 0; step < 120; ++step) {
    if (live.empty() || rng() % 3 == 0) {
      Result<WorkloadRecord> added = store->SubmitNumbered(
          Record("w" + std::to_string(rng() % 20), rng() % 2 ? "alpha" : "beta"), Duration::FromSeconds(step));
      if (!added.ok()) continue;  // a live name again
      live.push_back(*added);
      count(*added, +1);
    } else {
      WorkloadRecord& r = live[rng() % live.size()];
      if (store::IsTerminal(r.state)) continue;
      WorkloadRecord next = r;
      count(next, -1);
      next.state = states[rng() % 6];
      if (store::IsTerminal(next.state)) next.cost = Money(static_cast<int64_t>(rng() % 5000000), "EUR");
      ASSERT_TRUE(store->Update(next, "step", Duration::FromSeconds(step)).ok());
      count(next, +1);
      if (store::IsTerminal(next.state)) {
        store::AttemptRow a{next.name,   1,
                            next.tenant, "c",
                            "done",      1.5,
                            next.cost,   rng() % 2 == 0,
                            {},          Duration::FromMillis(static_cast<int64_t>(rng() % 4) * 86'400'000 - 1),
                            next.uid};
        ASSERT_TRUE(store->FinishAttempt(a).ok());
      }
      r = next;
    }
  }
  auto counts = store->CountByState();
  ASSERT_TRUE(counts.ok());
  std::map<std::tuple<std::string, std::string>, std::pair<int64_t, int64_t>> got;
  for (const store::StateCount& c : *counts) {
    if (c.workloads == 0) continue;
    auto& g = got[{c.tenant, store::StateName(c.state)}];
    g.first += c.workloads;
    g.second += c.cost.micros();
  }
  std::erase_if(expected, [](const auto& e) { return e.second.first == 0; });
  EXPECT_EQ(got, expected);
  // The metered days sum every booked attempt, including one a millisecond before 1970.
  auto days = store->MeteredDays(Duration::FromMillis(-86'400'000));
  auto usage = store->Usage();
  ASSERT_TRUE(days.ok() && usage.ok());
  std::map<std::string, int64_t> by_days;
  for (const store::MeteredDayRow& d : *days) by_days[d.tenant] += d.spent.micros();
  for (const auto& [tenant, u] : *usage) EXPECT_EQ(by_days[tenant], u.spent.micros()) << tenant;
}

TEST_P(BothBackends, Int64ExtremesDoublesAndTextRoundTrip) {
  auto db = Raw();
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Exec("CREATE TABLE t(k BIGINT PRIMARY KEY, d DOUBLE PRECISION NOT NULL, s TEXT NOT NULL)").ok());
  const std::vector<int64_t> ints = {std::numeric_limits<int64_t>::min(), -1, 0, 1,
                                     std::numeric_limits<int64_t>::max()};
  const std::vector<double> doubles = {
      0.1,      -0.0, 1e-308, 4.9406564584124654e-324, 1.7976931348623157e308, std::numeric_limits<double>::infinity(),
      2.0 / 3.0};
  const std::string text = "h\xC3\xA9llo 'quoted' $1 \xF0\x9F\x98\x80";
  for (size_t i = 0; i < doubles.size(); ++i) {
    auto insert = db->Prepare("INSERT INTO t(k, d, s) VALUES($1, $2, $3) ON CONFLICT(k) DO NOTHING");
    ASSERT_TRUE(insert.ok());
    (*insert)->Bind(1, ints[i % ints.size()]).Bind(2, doubles[i]).Bind(3, text);
    ASSERT_TRUE((*insert)->Run().ok());
    EXPECT_EQ((*insert)->RowsChanged(), i < ints.size() ? 1 : 0) << i;  // DO NOTHING changes nothing
  }
  for (size_t i = 0; i < ints.size(); ++i) {
    // A statement per read: SQLite binds only after a reset, and the Store never rebinds.
    auto read = db->Prepare("SELECT k, d, s FROM t WHERE k = $1");
    ASSERT_TRUE(read.ok());
    (*read)->Bind(1, ints[i]);
    Result<bool> row = (*read)->Step();
    ASSERT_TRUE(row.ok() && *row) << i;
    EXPECT_EQ((*read)->Int(0), ints[i]);
    const double d = (*read)->Real(1);
    // SQLite stores a REAL with an integral value as an integer: -0.0 reads back as 0.
    if (GetParam() == Backend::kPostgres) {
      EXPECT_EQ(std::signbit(d), std::signbit(doubles[i])) << i;
    }
    EXPECT_EQ(d, doubles[i]) << i;
    EXPECT_EQ((*read)->Text(2), text);
    EXPECT_FALSE(*(*read)->Step());
  }
}

// SQLite keeps a NUL byte; PostgreSQL's TEXT cannot, and its backend says so, naming the
// statement, rather than cutting the value at the NUL as libpq's C strings would.
TEST_P(BothBackends, TextPostgresCannotHoldIsRefusedClearlyNeverTruncated) {
  auto store = Open();
  ASSERT_NE(store, nullptr);
  const std::string nul("run\0rest", 8);
  Status set = store->SetMeta("k", nul);
  if (GetParam() == Backend::kSqlite) {
    ASSERT_TRUE(set.ok());
    EXPECT_EQ(**store->GetMeta("k"), nul);
    return;
  }
  EXPECT_EQ(set.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(set.message().find("NUL byte"), std::string::npos) << set.message();
  EXPECT_NE(set.message().find("INSERT INTO meta"), std::string::npos) << set.message();
  EXPECT_FALSE(store->GetMeta("k")->has_value());
  Status bad = store->SetMeta("k", "\xC3\x28");
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("not UTF-8"), std::string::npos) << bad.message();
  // The store goes on.
  EXPECT_TRUE(store->SetMeta("k", "fine").ok());
}

using PgStore = pg::testing::PgTest;

std::unique_ptr<Store> OpenOn(Result<std::unique_ptr<PgConnection>> c) {
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  if (!c.ok()) return nullptr;
  auto store = Store::OpenOn(std::move(c).value());
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

TEST_F(PgStore, MigratesOnceUnderTheLockAndRecordsTheVersion) {
  auto first = OpenOn(PgConnection::Adopt(Connect(), false));
  auto second = OpenOn(PgConnection::Adopt(Connect(), false));
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  auto rows =
      Connect()->Exec("read", "SELECT count(*) AS n, max(version) AS v FROM gpufed_schema WHERE component = 'store'");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows->Int64(0, "n"), Store::LatestSchemaVersion());
  EXPECT_EQ(*rows->Int64(0, "v"), Store::LatestSchemaVersion());
}

// Migrations 9 and 10 move the INSERT and UPDATE halves of the totals' trigger to
// statement triggers: rows a version-8 store counted stay counted, and rows written after
// it (inserted by a group, then moved between states) are counted once, in the writer's
// rows.
TEST_F(PgStore, TotalsCountedAtVersion8StayRightThroughMigrations9And10) {
  {
    auto old = PgConnection::Adopt(Connect(), false, "loop");
    ASSERT_TRUE(old.ok()) << old.status().ToString();
    const std::vector<const char*>& all = store::PostgresSchemaMigrations();
    ASSERT_EQ(all.size(), static_cast<size_t>(store::kLatestSchemaVersion));
    ASSERT_TRUE((*old)->Migrate({all.begin(), all.begin() + store::kSchemaTotalsByWriter}).ok());
    for (int i = 1; i <= 3; ++i) {
      ASSERT_TRUE((*old)
                      ->Exec("INSERT INTO workloads(name, uid, tenant, source, submitted_ms, seq, state, gpu_milli) "
                             "VALUES('old" +
                             std::to_string(i) + "', 'old" + std::to_string(i) + "-u" + std::to_string(i) +
                             "', 'alpha', 'api', 0, " + std::to_string(i) + ", 'Queued', 1000)")
                      .ok());
    }
    ASSERT_TRUE((*old)->Exec("INSERT INTO meta(key, value) VALUES('uid_counter', '3')").ok());
  }
  auto loop = PgConnection::Adopt(Connect(), false, "loop");
  auto api = PgConnection::Adopt(Connect(), false, "api");
  ASSERT_TRUE(loop.ok() && api.ok());
  auto store = Store::OpenOn(std::move(loop).value(), std::move(api).value());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->schema_version(), store::kLatestSchemaVersion);
  std::vector<WorkloadRecord> added;
  for (int i = 0; i < 4; ++i) {
    WorkloadRecord r = Record("new" + std::to_string(i), i % 2 == 0 ? "alpha" : "beta");
    r.gpu_milli = 500;
    Result<WorkloadRecord> got = (*store)->SubmitNumbered(r, Duration::FromSeconds(1));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    added.push_back(*got);
  }
  auto old_row = (*store)->GetByUid("old1-u1");
  ASSERT_TRUE(old_row.ok() && old_row->has_value());
  WorkloadRecord finished = **old_row;
  finished.state = WorkloadState::kSucceeded;
  ASSERT_TRUE((*store)->Update(finished, "done", Duration::FromSeconds(2)).ok());
  WorkloadRecord running = added[0];
  running.state = WorkloadState::kRunning;
  ASSERT_TRUE((*store)->Update(running, "placed", Duration::FromSeconds(2)).ok());

  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> got, recount;
  auto counts = (*store)->CountByState();
  ASSERT_TRUE(counts.ok());
  for (const store::StateCount& c : *counts) {
    if (c.workloads != 0) got[{c.tenant, store::StateName(c.state)}] = {c.workloads, c.gpu_milli};
  }
  auto rows = Connect()->Exec("recount",
                              "SELECT tenant, state, count(*) AS n, sum(gpu_milli) AS g FROM workloads "
                              "GROUP BY tenant, state");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  for (size_t i = 0; i < rows->size(); ++i) {
    recount[{*rows->Text(i, "tenant"), *rows->Text(i, "state")}] = {*rows->Int64(i, "n"), *rows->Int64(i, "g")};
  }
  EXPECT_EQ(got, recount);
  EXPECT_EQ(got[std::make_pair(std::string("alpha"), std::string("Queued"))],
            std::make_pair(int64_t{2}, int64_t{2000}));
  EXPECT_EQ(got[std::make_pair(std::string("alpha"), std::string("Pending"))],
            std::make_pair(int64_t{1}, int64_t{500}));
}

TEST_F(PgStore, ANewerSchemaIsRefused) {
  ASSERT_NE(OpenOn(PgConnection::Adopt(Connect(), false)), nullptr);
  ASSERT_TRUE(Connect()
                  ->Exec("plant", "INSERT INTO gpufed_schema(component, version, description) VALUES('store', $1, 'x')",
                         {Store::LatestSchemaVersion() + 1})
                  .ok());
  auto c = PgConnection::Adopt(Connect(), false);
  ASSERT_TRUE(c.ok());
  auto store = Store::OpenOn(std::move(c).value());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("newer"), std::string::npos) << store.status().message();
}

TEST_F(PgStore, AReadOnlyStoreReadsAndRefusesEveryWrite) {
  {
    auto writer = OpenOn(PgConnection::Adopt(Connect(), false));
    ASSERT_NE(writer, nullptr);
    ASSERT_TRUE(writer->SubmitNumbered(Record("a"), Duration::FromSeconds(1)).ok());
  }
  auto reader = OpenOn(PgConnection::Adopt(Connect(), true));
  ASSERT_NE(reader, nullptr);
  auto got = reader->GetByUid("a-u1");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(reader->SetMeta("k", "v").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(reader->SubmitNumbered(Record("b"), Duration::FromSeconds(2)).status().code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace gpufed::pgstore
