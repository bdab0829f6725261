// Statements prepared by key (store::Connection::PrepareByKey): inside a transaction each
// is planned as lookups by the table's key whatever the table's size, and the rest of the
// transaction keeps the session's own plan settings. What a statement read is counted by
// the server for the transaction itself (pg_stat_xact_user_tables), so these tests
// compare rows read, never times.
#include <gtest/gtest.h>

#include <array>
#include <string>

#include "controller/pg/testing/pg_test_server.h"
#include "controller/pgstore/connection.h"
#include "controller/store/insert_batches.h"

namespace gpufed::pgstore {
namespace {

using PlanByKey = pg::testing::PgTest;

// The update a pass sends (store_rows.cc), in small: `rows` rows of a VALUES list joined
// with the table on its key. `alias` tells two texts apart, so they never share a
// prepared statement.
std::string UpdateSql(size_t rows, const std::string& alias) {
  constexpr std::array<const char*, 2> kTypes = {"TEXT", "BIGINT"};
  return "UPDATE t SET v = " + alias + ".column2 FROM (VALUES" + store::TypedValuesOf(rows, kTypes) + ") AS " + alias +
         " WHERE t.k = " + alias + ".column1";
}
// A pass's statements hold up to 64 rows: with that many the server judges a scan of a
// table of thousands cheaper than 64 lookups.
constexpr size_t kPassRows = 64;

std::string Settings(store::Connection& c, const std::string& sql, bool by_key) {
  Result<std::unique_ptr<store::Statement>> s = by_key ? c.PrepareByKey(sql) : c.Prepare(sql);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (!s.ok()) return "";
  Result<bool> row = (*s)->Step();
  EXPECT_TRUE(row.ok() && *row) << row.status().ToString();
  if (!row.ok() || !*row) return "";
  std::string out = (*s)->Text(0) + " " + (*s)->Text(1) + " " + (*s)->Text(2) + " " + (*s)->Text(3);
  EXPECT_FALSE(*(*s)->Step());
  return out;
}

constexpr const char* kReadSettings =
    "SELECT current_setting('enable_seqscan'), current_setting('enable_hashjoin'), "
    "current_setting('enable_mergejoin'), current_setting('plan_cache_mode')";

TEST_F(PlanByKey, HoldsForTheStatementAloneAndGivesBackTheDatabasesSettings) {
  // The database's own setting, which the statements after the one by key must get back.
  ASSERT_TRUE(ConnectAsAdmin()->Exec("set", "ALTER DATABASE " + database() + " SET enable_mergejoin = off").ok());
  auto c = PgConnection::Adopt(Connect(), /*read_only=*/false);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  store::Connection& db = **c;

  ASSERT_TRUE(db.Begin().ok());
  EXPECT_EQ(Settings(db, kReadSettings, /*by_key=*/true), "off off off force_custom_plan");
  // A different text, so it is not the statement above run again.
  const std::string after = std::string(kReadSettings) + " AS after";
  EXPECT_EQ(Settings(db, after, /*by_key=*/false), "on on off auto");
  EXPECT_EQ(Settings(db, kReadSettings, /*by_key=*/true), "off off off force_custom_plan");
  ASSERT_TRUE(db.Commit().ok());

  // A statement by key sent with the next one (RunWithNext) gets the same.
  ASSERT_TRUE(db.Begin().ok());
  ASSERT_TRUE(db.Exec("CREATE TEMPORARY TABLE seen(settings TEXT)").ok());
  auto keep = db.PrepareByKey(
      "INSERT INTO seen SELECT concat_ws(' ', current_setting('enable_seqscan'), "
      "current_setting('enable_hashjoin'), current_setting('enable_mergejoin'), current_setting('plan_cache_mode'))");
  ASSERT_TRUE(keep.ok());
  ASSERT_TRUE((*keep)->RunWithNext().ok());
  EXPECT_EQ(Settings(db, after, /*by_key=*/false), "on on off auto");
  auto seen = db.Prepare("SELECT settings FROM seen");
  ASSERT_TRUE(seen.ok());
  ASSERT_TRUE(*(*seen)->Step());
  EXPECT_EQ((*seen)->Text(0), "off off off force_custom_plan");
  ASSERT_TRUE(db.Rollback().ok());

  // Outside a transaction it is planned as the server chooses (a setting made local to a
  // statement's own implicit transaction would end with it anyway).
  EXPECT_EQ(Settings(db, kReadSettings, /*by_key=*/true), "on on off auto");
}

// Rows the session read by scanning `t`, and lookups it made in its indexes, that the
// server has not yet added to its shared counts. It adds them only between transactions,
// so two readings in one transaction differ by what ran between them.
struct Reads {
  int64_t scanned = -1;
  int64_t looked_up = -1;
};
Reads ReadsOfT(store::Connection& db) {
  auto s = db.Prepare("SELECT seq_tup_read, coalesce(idx_scan, 0) FROM pg_stat_xact_user_tables WHERE relname = 't'");
  EXPECT_TRUE(s.ok());
  if (!s.ok() || !*(*s)->Step()) return {};
  return Reads{(*s)->Int(0), (*s)->Int(1)};
}

// Sets v of k<first>, k<first+1>, ... (as many as `sql` lists) to `v`.
Status RunUpdate(store::Connection& db, const std::string& sql, bool by_key, size_t rows, int first, int64_t v) {
  Result<std::unique_ptr<store::Statement>> s = by_key ? db.PrepareByKey(sql) : db.Prepare(sql);
  if (!s.ok()) return s.status();
  for (size_t i = 0; i < rows; ++i) {
    const int p = static_cast<int>(2 * i);
    (*s)->Bind(p + 1, "k" + std::to_string(first + static_cast<int>(i))).Bind(p + 2, v);
  }
  GPUFED_RETURN_IF_ERROR((*s)->Run());
  if ((*s)->RowsChanged() == static_cast<int64_t>(rows)) return Status::Ok();
  return Internal("changed " + std::to_string((*s)->RowsChanged()));
}

TEST_F(PlanByKey, AnUpdateLooksItsRowsUpAfterTheTableGrew) {
  // The server keeps one plan for a prepared statement when it judges it as good as a
  // fresh one (in a load run it kept one made at 3,330 workloads); the database's setting
  // makes it keep one here from the first run.
  ASSERT_TRUE(
      ConnectAsAdmin()->Exec("set", "ALTER DATABASE " + database() + " SET plan_cache_mode = force_generic_plan").ok());
  auto c = PgConnection::Adopt(Connect(), /*read_only=*/false);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  store::Connection& db = **c;
  ASSERT_TRUE(db.Exec("CREATE TABLE t(k TEXT PRIMARY KEY, v BIGINT NOT NULL, pad TEXT NOT NULL)").ok());
  ASSERT_TRUE(db.Exec("INSERT INTO t SELECT 'k' || g, 0, repeat('x', 200) FROM generate_series(1, 3000) g").ok());
  const std::string by_key_sql = UpdateSql(kPassRows, "v");
  const std::string planned_sql = UpdateSql(kPassRows, "w");
  // Runs on the smaller table.
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(db.Begin().ok());
    ASSERT_TRUE(RunUpdate(db, by_key_sql, /*by_key=*/true, kPassRows, 1, i).ok());
    ASSERT_TRUE(RunUpdate(db, planned_sql, /*by_key=*/false, kPassRows, 1, i).ok());
    ASSERT_TRUE(db.Commit().ok());
  }
  ASSERT_TRUE(db.Exec("INSERT INTO t SELECT 'k' || g, 0, repeat('x', 200) FROM generate_series(3001, 30000) g").ok());

  ASSERT_TRUE(db.Begin().ok());
  const Reads before = ReadsOfT(db);
  ASSERT_TRUE(RunUpdate(db, by_key_sql, /*by_key=*/true, kPassRows, 20000, 1).ok());
  const Reads by_key = ReadsOfT(db);
  // Why: the same statement planned as the server chose while the table was smaller reads
  // every row to change two.
  ASSERT_TRUE(RunUpdate(db, planned_sql, /*by_key=*/false, kPassRows, 20000, 2).ok());
  const Reads planned = ReadsOfT(db);
  ASSERT_TRUE(db.Rollback().ok());
  EXPECT_EQ(by_key.scanned - before.scanned, 0);
  EXPECT_EQ(by_key.looked_up - before.looked_up, static_cast<int64_t>(kPassRows));
  EXPECT_GE(planned.scanned - by_key.scanned, 30000);
}

TEST_F(PlanByKey, AFailedStatementLeavesTheTransactionToItsSavepoint) {
  auto c = PgConnection::Adopt(Connect(), /*read_only=*/false);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  store::Connection& db = **c;
  ASSERT_TRUE(db.Exec("CREATE TABLE t(k TEXT PRIMARY KEY, v BIGINT NOT NULL CHECK (v >= 0), pad TEXT NOT NULL)").ok());
  ASSERT_TRUE(db.Exec("INSERT INTO t VALUES ('k1', 0, ''), ('k2', 0, '')").ok());
  ASSERT_TRUE(db.Begin().ok());
  ASSERT_TRUE(db.Exec("SAVEPOINT s").ok());
  // Refused by the CHECK, run at once and sent with the next statement: each time the
  // savepoint undoes it, and the session's settings are back.
  const std::string sql = UpdateSql(2, "v");
  EXPECT_FALSE(RunUpdate(db, sql, /*by_key=*/true, 2, 1, -1).ok());
  ASSERT_TRUE(db.Exec("ROLLBACK TO SAVEPOINT s").ok());
  EXPECT_EQ(Settings(db, kReadSettings, /*by_key=*/false), "on on on auto");
  auto s = db.PrepareByKey(sql);
  ASSERT_TRUE(s.ok());
  (*s)->Bind(1, std::string("k1")).Bind(2, int64_t{-1}).Bind(3, std::string("k2")).Bind(4, int64_t{-1});
  ASSERT_TRUE((*s)->RunWithNext().ok());
  auto next = db.Prepare(kReadSettings);  // fails with the refusal, and does not run
  ASSERT_TRUE(next.ok());
  EXPECT_NE((*next)->Step().status().message().find("t_v_check"), std::string::npos);
  ASSERT_TRUE(db.Exec("ROLLBACK TO SAVEPOINT s").ok());
  EXPECT_EQ(Settings(db, kReadSettings, /*by_key=*/false), "on on on auto");
  ASSERT_TRUE(RunUpdate(db, sql, /*by_key=*/true, 2, 1, 5).ok());
  ASSERT_TRUE(db.Commit().ok());
}

}  // namespace
}  // namespace gpufed::pgstore
