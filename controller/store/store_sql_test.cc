// The Store's SQL is portable (sql.h, sql_portability.h): every statement it prepares or
// executes passes the check, SQLite's backend reads `$n` as PostgreSQL does, and a store
// made by the gpufed before the portable SQL opens and reads as it did.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "controller/store/schema.h"
#include "controller/store/sql_portability.h"
#include "controller/store/sqlite.h"
#include "controller/store/store.h"

namespace gpufed::store {
namespace {

namespace fs = std::filesystem;

std::string Folder(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/store_sql_test_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A connection that hands everything to another and keeps the text of every statement
// prepared or executed through it (shared with the test, which outlives the Store).
class RecordingConnection final : public Connection {
 public:
  RecordingConnection(std::unique_ptr<Connection> inner, std::shared_ptr<std::vector<std::string>> log,
                      SqlDialect dialect)
      : inner_(std::move(inner)), log_(std::move(log)), dialect_(dialect) {}
  SqlDialect dialect() const override { return dialect_; }
  Status Exec(const std::string& sql) override {
    log_->push_back(sql);
    return inner_->Exec(sql);
  }
  Result<std::unique_ptr<Statement>> Prepare(const std::string& sql) override {
    log_->push_back(sql);
    return inner_->Prepare(sql);
  }
  Result<std::unique_ptr<Statement>> PrepareByKey(const std::string& sql) override {
    log_->push_back(std::string(kByKeyMark) + sql);
    return inner_->PrepareByKey(sql);
  }
  // What the log puts before a statement prepared by key.
  static constexpr std::string_view kByKeyMark = "[by key] ";
  Status Begin() override { return inner_->Begin(); }
  Status Commit() override { return inner_->Commit(); }
  Status Rollback() override { return inner_->Rollback(); }
  bool InTransaction() const override { return inner_->InTransaction(); }
  bool read_only() const override { return inner_->read_only(); }
  Result<int> SchemaVersion() override { return inner_->SchemaVersion(); }
  Status SetSchemaVersion(int version) override { return inner_->SetSchemaVersion(version); }

 private:
  std::unique_ptr<Connection> inner_;
  std::shared_ptr<std::vector<std::string>> log_;
  SqlDialect dialect_;
};

struct RecordedStore {
  std::unique_ptr<Store> store;
  std::shared_ptr<std::vector<std::string>> log = std::make_shared<std::vector<std::string>>();
};

RecordedStore OpenRecorded(const std::string& path) {
  RecordedStore out;
  auto db = Database::Open(path, Durability::kUnsynced);
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  if (!db.ok()) return out;
  auto store = Store::OpenOn(std::make_unique<RecordingConnection>(std::move(*db), out.log, SqlDialect::kSqlite));
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  if (store.ok()) out.store = std::move(*store);
  out.log->clear();  // the migrations are SQLite's DDL (schema_sqlite.cc), not the Store's DML
  return out;
}

WorkloadRecord Workload(const std::string& name, const std::string& tenant) {
  WorkloadRecord r;
  r.name = name;
  r.tenant = tenant;
  r.source = "api";
  r.spec_text = "kind: Workload";
  r.gpu_milli = 1000;
  r.estimate = Money(2'000'000, "EUR");
  return r;
}

// Calls every method of the Store that reaches the database, each path that prepares
// its own SQL at least once (a new method belongs here).
void ExerciseEveryQuery(Store& s) {
  auto a = s.SubmitNumbered(Workload("a", "t1"), Duration::FromSeconds(1));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(s.SubmitNumbered(Workload("a", "t1"), Duration::FromSeconds(1)).status().code(),
            StatusCode::kAlreadyExists);
  WorkloadRecord b = Workload("b", "t2");
  b.uid = "b-u100";
  ASSERT_TRUE(s.Submit(b, Duration::FromSeconds(2)).ok());
  EXPECT_EQ(s.Submit(b, Duration::FromSeconds(2)).code(), StatusCode::kAlreadyExists);
  ActionRow intent{"create", a->ActionKey(), a->uid, 1, "c1", ActionState::kIntent, "", Duration::FromSeconds(3), "{}"};
  WorkloadRecord placed = *a;
  placed.state = WorkloadState::kPlaced;
  placed.cluster = "c1";
  ASSERT_TRUE(s.RecordIntentAndUpdate(intent, placed, "placed", Duration::FromSeconds(3)).ok());
  ASSERT_TRUE(s.MarkAction("create", a->ActionKey(), ActionState::kFailed, "full").ok());
  EXPECT_EQ(s.MarkAction("create", "none", ActionState::kApplied, "").code(), StatusCode::kNotFound);
  ASSERT_TRUE(s.RecordActionIntent(intent).ok());  // a failed intent is replaced
  s.MarkActionLater("create", a->ActionKey(), ActionState::kApplied, "");
  ASSERT_TRUE(s.GetAction("create", a->ActionKey()).ok());
  ASSERT_TRUE(s.Actions().ok());
  const StoreMark mark = *s.Mark();
  WorkloadRecord done = placed;
  done.state = WorkloadState::kSucceeded;
  done.cost = Money(3'000'000, "EUR");
  AttemptRow attempt{"a", 1, "t1", "c1", "succeeded", 3600, done.cost, true, {}, Duration::FromSeconds(9), a->uid};
  ASSERT_TRUE(s.FinishAttemptLater(attempt).ok());
  ASSERT_TRUE(s.RecordIntentsAndUpdates({}, {{done, "succeeded", Duration::FromSeconds(9)}}, {}).ok());
  ASSERT_TRUE(s.FinishAttempt(attempt).ok());  // booked once
  ASSERT_TRUE(s.Update(done, "again", Duration::FromSeconds(10)).ok());
  ASSERT_TRUE(s.RequestCancel("b-u100").ok());
  EXPECT_EQ(s.RequestCancel("none").code(), StatusCode::kNotFound);
  DecisionRow decision{0, Duration::FromSeconds(3), "a", 1, "r1", "placed", "c1", "", "{}", "t1", a->uid};
  ASSERT_TRUE(s.RecordDecision(decision).ok());
  s.RecordDecisionLater(decision);
  for (const auto& [tenant, name] : {std::pair{"", ""}, {"t1", ""}, {"t1", "a"}}) {
    ASSERT_TRUE(s.Decisions(tenant, name).ok());
    ASSERT_TRUE(s.Decisions(tenant, name, 1).ok());
  }
  ASSERT_TRUE(s.AttemptsAfter(mark).ok());
  ASSERT_TRUE(s.TransitionsAfter(mark).ok());
  ASSERT_TRUE(s.Usage().ok());
  ASSERT_TRUE(s.MeteredDays(Duration()).ok());
  ASSERT_TRUE(s.History(a->uid).ok());
  ASSERT_TRUE(s.Get("t1", "a").ok());
  ASSERT_TRUE(s.GetByUid(a->uid).ok());
  ASSERT_TRUE(s.FindByName("a").ok());
  ASSERT_TRUE(s.List().ok());
  ASSERT_TRUE(s.List("t2").ok());
  ASSERT_TRUE(s.ListUnfinished().ok());
  ASSERT_TRUE(s.ActiveEstimates().ok());
  ASSERT_TRUE(s.CountByState().ok());
  ASSERT_TRUE(s.SetMeta("clock_ms", "10").ok());
  s.SetMetaLater("clock_ms", "11");
  s.AppendHistoryLater(Duration::FromSeconds(11), "{}", Duration());
  ASSERT_TRUE(s.Flush().ok());
  ASSERT_TRUE(s.AppendHistory(Duration::FromSeconds(12), "{}", Duration::FromSeconds(11)).ok());
  ASSERT_TRUE(s.ReadHistory(Duration()).ok());
  ASSERT_TRUE(s.GetMetaMillis("clock_ms").ok());
}

TEST(StoreSql, EveryStatementTheStorePreparesOrExecutesIsPortable) {
  RecordedStore recorded = OpenRecorded(Folder("portable") + "/gpufed.db");
  ASSERT_NE(recorded.store, nullptr);
  ExerciseEveryQuery(*recorded.store);
  ASSERT_GT(recorded.log->size(), 40u);
  for (std::string sql : *recorded.log) {
    if (sql.starts_with(RecordingConnection::kByKeyMark)) sql.erase(0, RecordingConnection::kByKeyMark.size());
    EXPECT_TRUE(CheckPortableSql(sql).ok()) << CheckPortableSql(sql).ToString();
  }
}

// Upserts whose stored columns are bare (PostgreSQL: "column reference is ambiguous"),
// and one that qualifies them.
constexpr const char* kUnqualifiedUpsertValue =
    "INSERT INTO tenant_usage(tenant, spent_micros) VALUES($1,$2) ON CONFLICT(tenant) DO UPDATE SET "
    "spent_micros=spent_micros+excluded.spent_micros";
constexpr const char* kUnqualifiedUpsertWhere =
    "INSERT INTO actions(kind, key, state) VALUES($1,$2,'intent') ON CONFLICT(kind, key) DO UPDATE SET "
    "state='intent' WHERE state='failed'";
constexpr const char* kQualifiedUpsert =
    "INSERT INTO tenant_usage(tenant, spent_micros) VALUES($1,$2) ON CONFLICT(tenant) DO UPDATE SET "
    "spent_micros=tenant_usage.spent_micros+excluded.spent_micros, currency=excluded.currency "
    "WHERE tenant_usage.spent_micros >= 0";

TEST(StoreSql, ThePortabilityCheckRefusesWhatOnlyOneEngineTakes) {
  for (const char* sqlite_only : {
           "INSERT OR IGNORE INTO attempts(uid) VALUES($1)",      // the Store's SQL before it was portable
           "INSERT OR REPLACE INTO meta(key, value) VALUES($1,$2)",
           "REPLACE INTO meta(key, value) VALUES($1,$2)",
           "SELECT value FROM meta WHERE key=?",
           "SELECT value FROM meta WHERE key=?1",
           "SELECT value FROM meta WHERE key=:key",
           "SELECT value FROM meta WHERE key=@key",
           "SELECT value FROM meta WHERE key=$key",
           "SELECT value FROM meta WHERE key=$0",
           "SELECT $1::bigint",
           "PRAGMA user_version",
           "SELECT seq FROM workloads INDEXED BY workloads_unfinished",
           "SELECT last_insert_rowid()",
           "SELECT changes()",
           "SELECT json_extract(sample, '$.x') FROM history",
           "SELECT strftime('%s', 'now')",
           "SELECT MAX(rowid) FROM workloads",
           "SELECT (SELECT MAX(id) FROM status_history), (SELECT MAX(rowid) FROM attempts)",
           "SELECT _rowid_ FROM attempts",
           "SELECT uid FROM workloads WHERE state IS NOT $1",
           "SELECT uid FROM workloads LIMIT 5, 10",
           "SELECT \"uid\" FROM workloads",
           "SELECT IFNULL(uid, '') FROM workloads",
           "BEGIN IMMEDIATE",
           kUnqualifiedUpsertValue,
           kUnqualifiedUpsertWhere,
       }) {
    EXPECT_EQ(CheckPortableSql(sqlite_only).code(), StatusCode::kInvalidArgument) << sqlite_only;
  }
  for (const char* portable : {
           "SELECT value FROM meta WHERE key='a?b' AND value=$1 -- a ? in a comment",
           "SELECT uid FROM workloads WHERE tenant=$2 AND name=$1 ORDER BY seq DESC LIMIT 1 OFFSET 2",
           "SELECT uid FROM workloads WHERE reason IS NOT NULL AND state IS DISTINCT FROM $1",
           "SELECT MAX(rowid) FROM attempts",
           "SELECT kind FROM actions ORDER BY rowid",
           "INSERT INTO decisions(at_ms) VALUES($1) RETURNING seq",
           kQualifiedUpsert,
           "SELECT replace(uid, '-', '_') FROM workloads",
           "SAVEPOINT submit",
           "ROLLBACK TO SAVEPOINT submit",
       }) {
    EXPECT_TRUE(CheckPortableSql(portable).ok()) << CheckPortableSql(portable).ToString();
  }
}

TEST(StoreSql, SqliteBindsEachNumberedPlaceholderByItsNumber) {
  auto db = Database::Open(Folder("numbered") + "/gpufed.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  // SQLite alone would number $2 first here (named parameters go by first appearance).
  auto s = (*db)->Prepare("SELECT $2, $1, $2 || $1");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  (*s)->Bind(1, std::string("a")).Bind(2, std::string("b"));
  ASSERT_TRUE(*(*s)->Step());
  EXPECT_EQ((*s)->Text(0), "b");
  EXPECT_EQ((*s)->Text(1), "a");
  EXPECT_EQ((*s)->Text(2), "ba");
  for (const char* other : {"SELECT ?", "SELECT ?1", "SELECT :a", "SELECT @a", "SELECT $a", "SELECT $2", "SELECT $0"}) {
    EXPECT_EQ((*db)->Prepare(other).status().code(), StatusCode::kInvalidArgument) << other;
  }
}

TEST(StoreSql, ABindSqliteRefusesFailsTheStepInsteadOfRunningWithoutIt) {
  auto db = Database::Open(Folder("refused-bind") + "/gpufed.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto out_of_range = (*db)->Prepare("SELECT $1");
  ASSERT_TRUE(out_of_range.ok()) << out_of_range.status().ToString();
  (*out_of_range)->Bind(1, int64_t{7}).Bind(2, int64_t{8});
  Result<bool> stepped = (*out_of_range)->Step();
  ASSERT_FALSE(stepped.ok()) << "a $2 the statement does not have was dropped silently";
  EXPECT_NE(stepped.status().message().find("$2"), std::string::npos) << stepped.status().message();
  // A statement stepped and not reset refuses new values; it must not answer with the
  // old ones.
  auto again = (*db)->Prepare("SELECT $1");
  ASSERT_TRUE(again.ok());
  (*again)->Bind(1, int64_t{1});
  ASSERT_TRUE(*(*again)->Step());
  (*again)->Bind(1, int64_t{2});
  EXPECT_FALSE((*again)->Step().ok());
}

TEST(StoreSql, RowsChangedAreTheStatementsOwn) {
  auto db = Database::Open(Folder("changed") + "/gpufed.db");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t(k TEXT PRIMARY KEY, n INTEGER)").ok());
  auto insert = (*db)->Prepare("INSERT INTO t(k, n) VALUES('a', 1), ('b', 2)");
  ASSERT_TRUE(insert.ok() && (*insert)->Run().ok());
  EXPECT_EQ((*insert)->RowsChanged(), 2);
  auto read = (*db)->Prepare("SELECT n FROM t");  // SQLite's sqlite3_changes would still say 2
  ASSERT_TRUE(read.ok() && (*read)->Run().ok());
  EXPECT_EQ((*read)->RowsChanged(), 0);
  auto ignored = (*db)->Prepare("INSERT INTO t(k, n) VALUES('a', 5) ON CONFLICT(k) DO NOTHING");
  ASSERT_TRUE(ignored.ok() && (*ignored)->Run().ok());
  EXPECT_EQ((*ignored)->RowsChanged(), 0);
}

TEST(StoreSql, ListUnfinishedReadsThroughThePartialIndexWithoutAHint) {
  const std::string path = Folder("plan") + "/gpufed.db";
  RecordedStore recorded = OpenRecorded(path);
  ASSERT_NE(recorded.store, nullptr);
  ASSERT_TRUE(recorded.store->ListUnfinished().ok());
  ASSERT_EQ(recorded.log->size(), 1u);
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto plan = (*db)->Prepare("EXPLAIN QUERY PLAN " + recorded.log->front());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::string details;
  while (*(*plan)->Step()) details += (*plan)->Text(3) + "\n";
  // The index both filters and orders: no scan of the table, no sort.
  EXPECT_NE(details.find("USING INDEX workloads_unfinished"), std::string::npos) << details;
  EXPECT_EQ(details.find("TEMP B-TREE"), std::string::npos) << details;
}

// A pass's UPDATE joins its rows with workloads on uid: it is prepared by key (a backend
// whose planner might scan the table plans it as lookups, sql.h), and SQLite's own plan
// already looks each row up by uid.
TEST(StoreSql, APassUpdatesItsRowsByUidLookups) {
  const std::string path = Folder("update_plan") + "/gpufed.db";
  RecordedStore recorded = OpenRecorded(path);
  ASSERT_NE(recorded.store, nullptr);
  std::vector<Store::WorkloadUpdate> updates;
  for (const char* name : {"a", "b", "c"}) {
    auto submitted = recorded.store->SubmitNumbered(Workload(name, "t1"), Duration::FromSeconds(1));
    ASSERT_TRUE(submitted.ok()) << submitted.status().ToString();
    WorkloadRecord queued = *submitted;
    queued.state = WorkloadState::kQueued;
    updates.push_back({queued, "queued", Duration::FromSeconds(2)});
  }
  recorded.log->clear();
  ASSERT_TRUE(recorded.store->RecordIntentsAndUpdates({}, updates, Duration::FromSeconds(2)).ok());
  std::vector<std::string> by_key;
  for (const std::string& sql : *recorded.log) {
    if (sql.starts_with(RecordingConnection::kByKeyMark)) {
      by_key.push_back(sql.substr(RecordingConnection::kByKeyMark.size()));
    } else {
      EXPECT_FALSE(sql.starts_with("UPDATE workloads")) << sql;
    }
  }
  ASSERT_EQ(by_key.size(), 2u);  // 3 rows: a statement of 2 and one of 1
  auto db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  for (const std::string& sql : by_key) {
    EXPECT_TRUE(sql.starts_with("UPDATE workloads")) << sql;
    auto plan = (*db)->Prepare("EXPLAIN QUERY PLAN " + sql);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    std::string details;
    while (*(*plan)->Step()) details += (*plan)->Text(3) + "\n";
    EXPECT_NE(details.find("SEARCH workloads USING"), std::string::npos) << details;
    EXPECT_NE(details.find("(uid=?)"), std::string::npos) << details;
    EXPECT_EQ(details.find("SCAN workloads"), std::string::npos) << details;
  }
}

TEST(StoreSql, EachDialectHasOneMigrationPerSharedVersion) {
  EXPECT_EQ(SqliteSchemaMigrations().size(), static_cast<size_t>(kLatestSchemaVersion));
  EXPECT_EQ(&SchemaMigrations(SqlDialect::kSqlite), &SqliteSchemaMigrations());
  // PostgreSQL's list is applied to a real server by controller/pgstore's tests.
  EXPECT_EQ(PostgresSchemaMigrations().size(), static_cast<size_t>(kLatestSchemaVersion));
  EXPECT_EQ(&SchemaMigrations(SqlDialect::kPostgres), &PostgresSchemaMigrations());
}

}  // namespace
}  // namespace gpufed::store
