#include "controller/store/store.h"
#include "controller/store/sqlite.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

namespace gpufed::store {
namespace {

std::string Db(const std::string& name) {
  std::string dir = ::testing::TempDir() + "/store_test_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir + "/gpufed.db";
}

WorkloadRecord Record(const std::string& name, const std::string& tenant = "t") {
  WorkloadRecord r;
  r.name = name;
  r.uid = name + "-u1";
  r.tenant = tenant;
  r.source = "api";
  r.spec_text = "kind: Workload";
  return r;
}

TEST(Store, MigratesANewDatabaseToTheLatestSchema) {
  auto store = Store::Open(Db("migrate"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ((*store)->schema_version(), Store::LatestSchemaVersion());
}

// The virtual clock's saved time is read back as a time, and a value an edited or damaged
// state folder holds is an error that names the key, never an exception.
TEST(Store, AMetaTimeThatIsNotANumberOfMillisecondsIsDataLoss) {
  auto store = Store::Open(Db("meta_millis"));
  ASSERT_TRUE(store.ok());
  Result<std::optional<Duration>> absent = (*store)->GetMetaMillis("clock_ms");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  ASSERT_TRUE((*store)->SetMeta("clock_ms", "5400000").ok());
  Result<std::optional<Duration>> saved = (*store)->GetMetaMillis("clock_ms");
  ASSERT_TRUE(saved.ok() && saved->has_value());
  EXPECT_EQ((*saved)->millis(), 5400000);
  for (const char* bad : {"abc", "", "-1", "12 ", "99999999999999999999", "10000000000001"}) {
    ASSERT_TRUE((*store)->SetMeta("clock_ms", bad).ok());
    Result<std::optional<Duration>> read = (*store)->GetMetaMillis("clock_ms");
    ASSERT_FALSE(read.ok()) << bad;
    EXPECT_EQ(read.status().code(), StatusCode::kDataLoss) << bad;
    EXPECT_NE(read.status().message().find("clock_ms"), std::string::npos) << read.status().message();
  }
}

// Synced commits wait for the disk (synchronous=FULL); an unsynced store (simulations,
// common/durability.h) does not (OFF), and still keeps what it committed across a reopen.
TEST(Store, DurabilityDecidesWhetherACommitWaitsForTheDisk) {
  for (Durability d : {Durability::kSynced, Durability::kUnsynced}) {
    const std::string path = Db(d == Durability::kSynced ? "synced" : "unsynced");
    auto db = Database::Open(path, d);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto pragma = (*db)->Prepare("PRAGMA synchronous");
    ASSERT_TRUE(pragma.ok());
    ASSERT_TRUE((*pragma)->Step().ok());
    EXPECT_EQ((*pragma)->Int(0), d == Durability::kSynced ? 2 : 0);  // FULL = 2, OFF = 0
  }
  const std::string path = Db("unsynced_reopen");
  {
    auto store = Store::Open(path, Durability::kUnsynced);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->SetMeta("k", "v").ok());
  }
  auto again = Store::Open(path);
  ASSERT_TRUE(again.ok());
  auto v = (*again)->GetMeta("k");
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(v->has_value());
  EXPECT_EQ(**v, "v");
}

// A COMMIT that fails leaves no transaction open behind it: the next one begins. (A
// deferred foreign key violated at COMMIT is SQLite's way to make COMMIT fail and keep the
// transaction open, as a full disk can.)
TEST(Store, AFailedCommitRollsBackSoTheNextTransactionBegins) {
  auto db = Database::Open(Db("failed_commit"));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  Database& d = **db;
  ASSERT_TRUE(d.Exec("PRAGMA foreign_keys=ON").ok());
  ASSERT_TRUE(d.Exec("CREATE TABLE parent(id INTEGER PRIMARY KEY)").ok());
  ASSERT_TRUE(d.Exec("CREATE TABLE child(p INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)").ok());
  {
    Transaction t(d);
    ASSERT_TRUE(t.begin_status().ok());
    ASSERT_TRUE(d.Exec("INSERT INTO child VALUES (42)").ok());
    EXPECT_FALSE(t.Commit().ok());
    EXPECT_FALSE(d.InTransaction());
  }
  Transaction next(d);
  ASSERT_TRUE(next.begin_status().ok()) << next.begin_status().ToString();
  ASSERT_TRUE(d.Exec("INSERT INTO parent VALUES (1)").ok());
  ASSERT_TRUE(d.Exec("INSERT INTO child VALUES (1)").ok());
  EXPECT_TRUE(next.Commit().ok());
}

TEST(Store, RefusesAFileThatIsNotADatabase) {
  std::string path = Db("garbage");
  std::ofstream(path) << std::string(4096, 'x');
  EXPECT_FALSE(Store::Open(path).ok());
}

TEST(Store, KeepsSubmissionsAndTransitionsAcrossReopen) {
  std::string path = Db("reopen");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE((*store)->Submit(Record("a"), Duration::FromSeconds(1)).ok());
    WorkloadRecord r = *(*store)->Get("t", "a").value();
    r.state = WorkloadState::kQueued;
    r.reason = "capacity";
    ASSERT_TRUE((*store)->Update(r, "capacity", Duration::FromSeconds(2)).ok());
  }
  auto store = Store::Open(path);
  auto r = (*store)->Get("t", "a");
  ASSERT_TRUE(r.ok() && *r);
  EXPECT_EQ((*r)->state, WorkloadState::kQueued);
  auto history = (*store)->History("a-u1");
  ASSERT_EQ(history->size(), 2u);
  EXPECT_EQ((*history)[1].from, "Pending");
  EXPECT_EQ((*history)[1].to, "Queued");
}

TEST(Store, ListUnfinishedReadsOnlyWaitingAndActiveRows) {
  auto store = Store::Open(Db("unfinished"));
  ASSERT_TRUE(store.ok());
  Store& s = **store;
  // A history of finished work in every terminal state, and a little live work.
  const WorkloadState terminal[] = {WorkloadState::kSucceeded, WorkloadState::kFailed, WorkloadState::kRejected,
                                    WorkloadState::kCancelled};
  for (int i = 0; i < 400; ++i) {
    WorkloadRecord r = Record("done-" + std::to_string(i));
    ASSERT_TRUE(s.Submit(r, Duration::FromSeconds(i)).ok());
    r.state = terminal[i % 4];
    ASSERT_TRUE(s.Update(r, "ended", Duration::FromSeconds(i)).ok());
  }
  const WorkloadState live[] = {WorkloadState::kPending, WorkloadState::kQueued,  WorkloadState::kRequeued,
                                WorkloadState::kPlaced,  WorkloadState::kRunning, WorkloadState::kPreempted};
  for (int i = 0; i < 6; ++i) {
    WorkloadRecord r = Record("live-" + std::to_string(i));
    ASSERT_TRUE(s.Submit(r, Duration::FromSeconds(1000 + i)).ok());
    r.state = live[i];
    r.estimate = Money(int64_t{1000000} * (i + 1), "EUR");
    r.cloud = i == 4;
    ASSERT_TRUE(s.Update(r, "live", Duration::FromSeconds(1000 + i)).ok());
  }
  const int64_t before = s.rows_read();
  auto unfinished = s.ListUnfinished();
  ASSERT_TRUE(unfinished.ok());
  EXPECT_EQ(s.rows_read() - before, 6);  // the 400 finished rows are never read
  ASSERT_EQ(unfinished->size(), 6u);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ((*unfinished)[i].name, "live-" + std::to_string(i));  // submission order
    EXPECT_EQ((*unfinished)[i].state, live[i]);
  }
  // Estimates of the active ones (Placed 4 EUR, Running 5 EUR on a cloud).
  auto estimates = s.ActiveEstimates();
  ASSERT_TRUE(estimates.ok());
  EXPECT_EQ((*estimates)["t"].all.micros(), 9000000);
  EXPECT_EQ((*estimates)["t"].cloud.micros(), 5000000);
  // Counts cover the whole history.
  auto counts = s.CountByState();
  ASSERT_TRUE(counts.ok());
  int64_t total = 0;
  for (const StateCount& c : *counts) total += c.workloads;
  EXPECT_EQ(total, 406);
  EXPECT_EQ(s.rows_read() - before, 6);  // aggregates read no rows into records
}

TEST(Store, RejectsADuplicateLiveWorkloadButAcceptsOneAfterItEnded) {
  auto store = Store::Open(Db("dup"));
  ASSERT_TRUE((*store)->Submit(Record("a"), {}).ok());
  WorkloadRecord twin = Record("a");
  twin.uid = "a-u9";
  EXPECT_EQ((*store)->Submit(twin, {}).code(), StatusCode::kAlreadyExists);
  WorkloadRecord r = *(*store)->Get("t", "a").value();
  r.state = WorkloadState::kSucceeded;
  ASSERT_TRUE((*store)->Update(r, "done", {}).ok());
  WorkloadRecord again = Record("a");
  again.uid = "a-u2";
  EXPECT_TRUE((*store)->Submit(again, {}).ok());
  EXPECT_EQ((*store)->Get("t", "a").value()->uid, "a-u2");
  // The first run is kept, with its own history; the second has only its submission.
  auto first = (*store)->GetByUid("a-u1");
  ASSERT_TRUE(first.ok() && *first);
  EXPECT_EQ((*first)->state, WorkloadState::kSucceeded);
  EXPECT_EQ((*store)->History("a-u1")->size(), 2u);
  EXPECT_EQ((*store)->History("a-u2")->size(), 1u);
  EXPECT_EQ((*store)->List("t")->size(), 2u);
}

// The API's submissions: the uid comes from a counter written in the submission's own
// transaction, so a refused submission takes no number and a reopened store goes on.
// Submissions from many threads at once are committed in groups: every one is answered,
// the uids are distinct and consecutive, a refused duplicate refuses no other of its
// group, and everything answered OK is in the database after a reopen.
TEST(Store, ConcurrentNumberedSubmissionsAreGroupCommittedAndEachAnsweredOnItsOwn) {
  const std::string path = Db("group_commit");
  constexpr int kThreads = 8, kEach = 40;
  std::vector<std::vector<Result<WorkloadRecord>>> results(kThreads);
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->SubmitNumbered(Record("dup", "alpha"), Duration::FromSeconds(1)).ok());
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kEach; ++i) {
          // Every fifth one names the live "dup": AlreadyExists, whatever group it lands in.
          const std::string name = i % 5 == 0 ? "dup" : "w" + std::to_string(t) + "-" + std::to_string(i);
          results[t].push_back((*store)->SubmitNumbered(Record(name, "alpha"), Duration::FromSeconds(2)));
        }
      });
    }
    for (std::thread& th : threads) th.join();
  }
  std::set<std::string> uids;
  int accepted = 0, refused = 0;
  for (const auto& per_thread : results) {
    for (const Result<WorkloadRecord>& r : per_thread) {
      if (r.ok()) {
        ++accepted;
        EXPECT_TRUE(uids.insert(r->uid).second) << r->uid;
      } else {
        ++refused;
        EXPECT_EQ(r.status().code(), StatusCode::kAlreadyExists) << r.status().ToString();
      }
    }
  }
  EXPECT_EQ(refused, kThreads * kEach / 5);
  EXPECT_EQ(accepted, kThreads * kEach - refused);
  // Consecutive numbers after the first submission's 1: no number is lost to a refusal.
  std::set<int> numbers;
  for (const std::string& uid : uids) numbers.insert(std::stoi(uid.substr(uid.rfind("-u") + 2)));
  EXPECT_EQ(*numbers.begin(), 2);
  EXPECT_EQ(*numbers.rbegin(), accepted + 1);
  auto reopened = Store::Open(path);
  ASSERT_TRUE(reopened.ok());
  auto all = (*reopened)->List("alpha");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), static_cast<size_t>(accepted + 1));
}

// The trigger-kept totals always equal a count of the rows: random submissions, state
// changes, metered costs and reused names, compared after every step.
TEST(Store, CountByStateFollowsEveryWriteWithoutReadingTheRows) {
  auto store = Store::Open(Db("state_totals"));
  ASSERT_TRUE(store.ok());
  std::mt19937 rng(7);
  std::vector<WorkloadRecord> live;
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> expected;  // (tenant, state) -> (n, cost)
  auto count = [&](const WorkloadRecord& r, int sign) {
    auto& e = expected[{r.tenant, StateName(r.state)}];
    e.first += sign;
    e.second += sign * r.cost.micros();
  };
  const WorkloadState states[] = {WorkloadState::kQueued,    WorkloadState::kPlaced, WorkloadState::kRunning,
                                  WorkloadState::kSucceeded, WorkloadState::kFailed, WorkloadState::kRequeued};
  for (int step = 0; step < 300; ++step) {
    if (live.empty() || rng() % 3 == 0) {
      WorkloadRecord r = Record("w" + std::to_string(rng() % 40), rng() % 2 ? "alpha" : "beta");
      r.uid.clear();
      Result<WorkloadRecord> added = (*store)->SubmitNumbered(r, Duration::FromSeconds(step));
      if (!added.ok()) continue;  // a live name again
      live.push_back(*added);
      count(*added, +1);
    } else {
      WorkloadRecord& r = live[rng() % live.size()];
      if (IsTerminal(r.state)) continue;
      Result<std::optional<WorkloadRecord>> current = (*store)->GetByUid(r.uid);
      ASSERT_TRUE(current.ok() && *current);
      WorkloadRecord next = **current;
      count(next, -1);
      next.state = states[rng() % 6];
      if (IsTerminal(next.state)) next.cost = Money(static_cast<int64_t>(rng() % 5000000), "EUR");
      ASSERT_TRUE((*store)->Update(next, "step", Duration::FromSeconds(step)).ok());
      count(next, +1);
      r = next;
    }
    const int64_t read_before = (*store)->rows_read();
    Result<std::vector<StateCount>> counts = (*store)->CountByState();
    ASSERT_TRUE(counts.ok());
    EXPECT_EQ((*store)->rows_read(), read_before);
    std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> got;
    for (const StateCount& c : *counts) {
      auto& g = got[{c.tenant, StateName(c.state)}];
      g.first += c.workloads;
      g.second += c.cost.micros();
    }
    for (auto it = expected.begin(); it != expected.end();)
      it = it->second.first == 0 ? expected.erase(it) : std::next(it);
    ASSERT_EQ(got, expected) << "after step " << step;
  }
}

TEST(Store, NumberedSubmissionsTakeTheNextUidInTheSameTransaction) {
  const std::string path = Db("numbered");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok());
    WorkloadRecord a = Record("train", "alpha");
    a.uid.clear();
    Result<WorkloadRecord> first = (*store)->SubmitNumbered(a, Duration::FromSeconds(1));
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    EXPECT_EQ(first->uid, "train-u1");
    EXPECT_EQ(first->state, WorkloadState::kPending);
    // Another tenant's same name: its own row, the next number.
    WorkloadRecord b = Record("train", "beta");
    Result<WorkloadRecord> second = (*store)->SubmitNumbered(b, Duration::FromSeconds(2));
    ASSERT_TRUE(second.ok());
    EXPECT_EQ(second->uid, "train-u2");
    // A live duplicate is refused and rolls its counter update back.
    Result<WorkloadRecord> twin = (*store)->SubmitNumbered(Record("train", "alpha"), Duration::FromSeconds(3));
    ASSERT_FALSE(twin.ok());
    EXPECT_EQ(twin.status().code(), StatusCode::kAlreadyExists);
  }
  auto reopened = Store::Open(path);
  ASSERT_TRUE(reopened.ok());
  Result<WorkloadRecord> third = (*reopened)->SubmitNumbered(Record("eval", "alpha"), Duration::FromSeconds(4));
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->uid, "eval-u3");
  Result<std::optional<WorkloadRecord>> stored = (*reopened)->GetByUid("train-u2");
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->tenant, "beta");
}

TEST(Store, NamesAreNamespacedByTenant) {
  auto store = Store::Open(Db("namespaced"));
  WorkloadRecord mine = Record("train", "alpha");
  WorkloadRecord theirs = Record("train", "beta");
  theirs.uid = "train-u2";
  ASSERT_TRUE((*store)->Submit(mine, {}).ok());
  // Another tenant's live workload of the same name is not in the way.
  ASSERT_TRUE((*store)->Submit(theirs, {}).ok());
  EXPECT_EQ((*store)->Get("alpha", "train").value()->uid, "train-u1");
  EXPECT_EQ((*store)->Get("beta", "train").value()->uid, "train-u2");
  EXPECT_FALSE((*store)->Get("gamma", "train").value().has_value());
  EXPECT_EQ((*store)->List("alpha")->size(), 1u);
  EXPECT_EQ((*store)->FindByName("train")->size(), 2u);
  // Decisions of one tenant's name never include the other's.
  ASSERT_TRUE((*store)->RecordDecision({0, {}, "train", 1, "rev", "queued", "", "a", "{}", "alpha", "train-u1"}).ok());
  ASSERT_TRUE((*store)->RecordDecision({0, {}, "train", 1, "rev", "placed", "c", "b", "{}", "beta", "train-u2"}).ok());
  auto alpha = (*store)->Decisions("alpha", "train");
  ASSERT_EQ(alpha->size(), 1u);
  EXPECT_EQ((*alpha)[0].uid, "train-u1");
  EXPECT_EQ((*store)->Decisions("", "")->size(), 2u);
}

TEST(Store, ListsOneTenantsWorkloadsInSubmissionOrder) {
  auto store = Store::Open(Db("list"));
  ASSERT_TRUE((*store)->Submit(Record("b", "x"), {}).ok());
  ASSERT_TRUE((*store)->Submit(Record("a", "y"), {}).ok());
  ASSERT_TRUE((*store)->Submit(Record("c", "x"), {}).ok());
  auto xs = (*store)->List("x");
  ASSERT_EQ(xs->size(), 2u);
  EXPECT_EQ((*xs)[0].name, "b");
  EXPECT_EQ((*xs)[1].name, "c");
  EXPECT_EQ((*store)->List()->size(), 3u);
}

TEST(Store, AnActionIntentIsRecordedOnceAndAFailedOneCanBeReplaced) {
  auto store = Store::Open(Db("actions"));
  ActionRow row{"submit", "a-u1.a1", "a", 1, "c1", ActionState::kIntent, "", {}, "{\"v\":1}"};
  ASSERT_TRUE((*store)->RecordActionIntent(row).ok());
  ASSERT_TRUE((*store)->MarkAction("submit", "a-u1.a1", ActionState::kApplied, "").ok());
  row.payload = "{\"v\":2}";
  ASSERT_TRUE((*store)->RecordActionIntent(row).ok());
  auto got = (*store)->GetAction("submit", "a-u1.a1");
  EXPECT_EQ((*got)->state, ActionState::kApplied);
  EXPECT_EQ((*got)->payload, "{\"v\":1}");
  ASSERT_TRUE((*store)->MarkAction("submit", "a-u1.a1", ActionState::kFailed, "busy").ok());
  ASSERT_TRUE((*store)->RecordActionIntent(row).ok());
  got = (*store)->GetAction("submit", "a-u1.a1");
  EXPECT_EQ((*got)->state, ActionState::kIntent);
  EXPECT_EQ((*got)->payload, "{\"v\":2}");
  EXPECT_EQ((*store)->MarkAction("cancel", "zzz", ActionState::kApplied, "").code(), StatusCode::kNotFound);
}

TEST(Store, BooksAnAttemptsCostOnlyOnce) {
  auto store = Store::Open(Db("usage"));
  AttemptRow a{"w",   1, "t", "cloud", "succeeded", 3600, Money(5000000, "EUR"), true, {}, Duration::FromSeconds(60),
               "w-u1"};
  ASSERT_TRUE((*store)->FinishAttempt(a).ok());
  ASSERT_TRUE((*store)->FinishAttempt(a).ok());
  auto usage = (*store)->Usage();
  EXPECT_EQ(usage->at("t").spent, Money(5000000, "EUR"));
  EXPECT_EQ(usage->at("t").cloud_spent, Money(5000000, "EUR"));
  EXPECT_EQ((*store)->Attempts()->size(), 1u);
  a.uid.clear();
  EXPECT_EQ((*store)->FinishAttempt(a).code(), StatusCode::kInvalidArgument);
}

TEST(Store, ChargesEveryRunOfAReusedName) {
  auto store = Store::Open(Db("reuse"));
  // Three runs of "reuse-1", each attempt 1: each is its own submission (uid).
  for (int run = 1; run <= 3; ++run) {
    AttemptRow a{"reuse-1",
                 1,
                 "t",
                 "c",
                 "succeeded",
                 60,
                 Money(1000000, "EUR"),
                 false,
                 {},
                 {},
                 "reuse-1-u" + std::to_string(run)};
    ASSERT_TRUE((*store)->FinishAttempt(a).ok());
  }
  EXPECT_EQ((*store)->Attempts()->size(), 3u);
  EXPECT_EQ((*store)->Usage()->at("t").spent, Money(3000000, "EUR"));
}

TEST(Store, KeepsTheNewestDecisionsFirst) {
  auto store = Store::Open(Db("decisions"));
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*store)
                    ->RecordDecision({0, {}, "w", 1, "rev", "queued", "", "r" + std::to_string(i), "{}", "t", "w-u1"})
                    .ok());
  }
  auto rows = (*store)->Decisions("t", "w", 2);
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].reason, "r2");
}

TEST(Store, ACancelRequestSurvivesAConcurrentUpdate) {
  auto store = Store::Open(Db("cancel"));
  ASSERT_TRUE((*store)->Submit(Record("a"), {}).ok());
  WorkloadRecord stale = *(*store)->Get("t", "a").value();
  ASSERT_TRUE((*store)->RequestCancel("a-u1").ok());
  stale.state = WorkloadState::kQueued;
  ASSERT_TRUE((*store)->Update(stale, "queued", {}).ok());
  EXPECT_TRUE((*store)->Get("t", "a").value()->cancel_requested);
  EXPECT_EQ((*store)->RequestCancel("nope").code(), StatusCode::kNotFound);
}

// Writes that wait for the store's next commit (store_deferred.cc): invisible to another
// connection until then, committed with the next write (one commit for both) or by a read
// of their table, read where they wait by GetAction and GetMeta, bounded, and not lost
// when the store closes.
TEST(StoreDeferred, ABookingWaitsForTheUpdateThatEndsTheAttemptAndCommitsWithIt) {
  const std::string path = Db("deferred_attempt");
  auto loop = Store::Open(path);
  auto reader = Store::Open(path);  // another connection: sees only what is committed
  ASSERT_TRUE(loop.ok() && reader.ok());
  WorkloadRecord r = Record("w");
  ASSERT_TRUE((*loop)->Submit(r, Duration::FromSeconds(1)).ok());
  AttemptRow a{"w", 1, "t", "c", "succeeded", 60, Money(2000000, "EUR"), false, {}, {}, "w-u1"};
  ASSERT_TRUE((*loop)->FinishAttemptLater(a).ok());
  EXPECT_EQ((*loop)->deferred_writes(), 1u);
  EXPECT_TRUE((*reader)->Attempts()->empty());
  r.state = WorkloadState::kSucceeded;
  r.cost = Money(2000000, "EUR");
  ASSERT_TRUE((*loop)->Update(r, "done", Duration::FromSeconds(61)).ok());
  EXPECT_EQ((*loop)->deferred_writes(), 0u);
  EXPECT_EQ((*reader)->Attempts()->size(), 1u);
  EXPECT_EQ((*reader)->Usage()->at("t").spent, Money(2000000, "EUR"));
  EXPECT_EQ((*(*reader)->GetByUid("w-u1"))->state, WorkloadState::kSucceeded);
  a.uid.clear();
  EXPECT_EQ((*loop)->FinishAttemptLater(a).code(), StatusCode::kInvalidArgument);
}

TEST(StoreDeferred, ReadsSeeWhatWaitsAndOnlyReadsOfItsTableCommitIt) {
  const std::string path = Db("deferred_reads");
  auto store = Store::Open(path);
  auto other = Store::Open(path);
  ASSERT_TRUE(store.ok() && other.ok());
  ActionRow row{"submit", "a-u1.a1", "a", 1, "c1", ActionState::kIntent, "", {}, "{}"};
  ASSERT_TRUE((*store)->RecordActionIntent(row).ok());
  (*store)->MarkActionLater("submit", "a-u1.a1", ActionState::kApplied, "");
  (*store)->SetMetaLater("clock_ms", "1000");
  (*store)->SetMetaLater("clock_ms", "2000");  // in place of the first
  EXPECT_EQ((*store)->deferred_writes(), 2u);
  // Read where they wait, without a commit.
  EXPECT_EQ((*(*store)->GetAction("submit", "a-u1.a1"))->state, ActionState::kApplied);
  EXPECT_EQ(*(*store)->GetMeta("clock_ms"), std::optional<std::string>("2000"));
  EXPECT_TRUE((*store)->ListUnfinished()->empty());
  EXPECT_EQ((*store)->deferred_writes(), 2u);
  EXPECT_EQ((*(*other)->GetAction("submit", "a-u1.a1"))->state, ActionState::kIntent);
  EXPECT_FALSE((*(*other)->GetMeta("clock_ms")).has_value());
  // A read of a table they change commits them all first.
  (*store)->RecordDecisionLater({0, {}, "a", 1, "rev", "placed", "c1", "fits", "{}", "t", "a-u1"});
  EXPECT_EQ((*store)->Decisions("t", "a")->size(), 1u);
  EXPECT_EQ((*store)->deferred_writes(), 0u);
  EXPECT_EQ((*(*other)->GetAction("submit", "a-u1.a1"))->state, ActionState::kApplied);
  EXPECT_EQ(*(*other)->GetMeta("clock_ms"), std::optional<std::string>("2000"));
  // An outcome for an action that has no intent marks nothing and blocks nothing.
  (*store)->MarkActionLater("cancel", "zzz", ActionState::kApplied, "");
  EXPECT_TRUE((*store)->Flush().ok());
  EXPECT_FALSE((*(*store)->GetAction("cancel", "zzz")).has_value());
}

TEST(StoreDeferred, AtMostAFewHundredWritesWait) {
  auto store = Store::Open(Db("deferred_bound"));
  ASSERT_TRUE(store.ok());
  for (int i = 0; i <= static_cast<int>(Store::kMaxDeferred); ++i) {
    (*store)->AppendHistoryLater(Duration::FromSeconds(i), "{}", Duration());
  }
  EXPECT_EQ((*store)->deferred_writes(), 0u);
  (*store)->AppendHistoryLater(Duration::FromSeconds(1000), "{}", Duration());
  EXPECT_EQ((*store)->ReadHistory(Duration())->size(), Store::kMaxDeferred + 2);
}

TEST(StoreDeferred, ClosingTheStoreCommitsWhatWaits) {
  const std::string path = Db("deferred_close");
  {
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->RecordActionIntent({"submit", "k", "a", 1, "c1", ActionState::kIntent, "", {}, "{}"}).ok());
    (*store)->MarkActionLater("submit", "k", ActionState::kFailed, "refused");
  }
  auto again = Store::Open(path);
  ASSERT_TRUE(again.ok());
  auto action = (*again)->GetAction("submit", "k");
  ASSERT_TRUE(action.ok() && action->has_value());
  EXPECT_EQ((*action)->state, ActionState::kFailed);
  EXPECT_EQ((*action)->error, "refused");
}

// An API submission's group commit leaves the loop's waiting writes waiting: it does not
// write them for the loop (nor fail with them); the loop's next write does.
TEST(StoreDeferred, ASubmissionNeitherCarriesNorWaitsForTheLoopsWaitingWrites) {
  const std::string path = Db("deferred_submit");
  auto store = Store::Open(path);
  auto other = Store::Open(path);
  ASSERT_TRUE(store.ok() && other.ok());
  (*store)->RecordDecisionLater({0, {}, "a", 1, "rev", "placed", "c1", "fits", "{}", "t", "a-u1"});
  ASSERT_EQ((*store)->deferred_writes(), 1u);
  Result<WorkloadRecord> added = (*store)->SubmitNumbered(Record("b", "t"), Duration::FromSeconds(1));
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_TRUE((*(*other)->Get("t", "b")).has_value()) << "the submission committed";
  EXPECT_EQ((*store)->deferred_writes(), 1u) << "the decision row still waits";
  EXPECT_TRUE((*other)->Decisions("t", "a")->empty());
  WorkloadRecord placed = *added;
  placed.state = WorkloadState::kPlaced;
  ASSERT_TRUE((*store)->Update(placed, "placed", Duration::FromSeconds(2)).ok());  // the loop's next write
  EXPECT_EQ((*store)->deferred_writes(), 0u);
  EXPECT_EQ((*other)->Decisions("t", "a")->size(), 1u);
}

}  // namespace
}  // namespace gpufed::store
