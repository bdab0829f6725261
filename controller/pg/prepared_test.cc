// Connection's prepared statements and deferred commands against a real PostgreSQL 15:
// each text prepared once per session, the bound, a server that lost its statements
// (DISCARD ALL, DEALLOCATE), a failed transaction, and commands that ride with the next
// statement in one pipeline. Round trips are counted (Connection::round_trips), never timed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/pg/connection.h"
#include "controller/pg/testing/pg_test_server.h"
#include "controller/pg/transaction.h"

namespace gpufed::pg {
namespace {

using ::testing::HasSubstr;
using testing::PgTest;

class PreparedTest : public PgTest {
 protected:
  // The session's own prepared statements, as the server lists them.
  static int64_t ServerPrepared(Connection& connection) {
    auto rows = connection.Exec("count prepared statements", "SELECT count(*) AS n FROM pg_prepared_statements");
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? rows->Int64(0, "n").value() : -1;
  }
  static Result<Rows> Insert(Connection& connection, int64_t n) {
    const Param params[] = {Param(n)};
    return connection.ExecPrepared("insert a row", "INSERT INTO t(n) VALUES($1)", params);
  }
};

TEST_F(PreparedTest, ATextIsPreparedOnceAndRunByNameAfter) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Exec("create", "CREATE TABLE t(n BIGINT PRIMARY KEY)").ok());
  const uint64_t before = connection->round_trips();
  for (int64_t n = 1; n <= 3; ++n) {
    auto done = Insert(*connection, n);
    ASSERT_TRUE(done.ok()) << done.status().ToString();
    EXPECT_EQ(done->affected(), 1);
  }
  // The parse rode with the first run: one round trip each.
  EXPECT_EQ(connection->round_trips() - before, 3U);
  EXPECT_EQ(connection->prepared_statements(), 1U);
  EXPECT_EQ(ServerPrepared(*connection), 1);
  const Param params[] = {Param(int64_t{2})};
  auto read = connection->ExecPrepared("read a row", "SELECT n FROM t WHERE n = $1", params);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->Int64(0, "n").value(), 2);
  EXPECT_EQ(ServerPrepared(*connection), 2);
}

TEST_F(PreparedTest, AnErrorNamesThePurposeAndAFailedParseIsNotKept) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  auto bad =
      connection->ExecPrepared("read a missing table", "SELECT n FROM missing WHERE n = $1", std::span<const Param>());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("read a missing table"));
  EXPECT_EQ(connection->prepared_statements(), 0U);
  EXPECT_EQ(ServerPrepared(*connection), 0);
}

TEST_F(PreparedTest, TheCacheIsBoundedAndDeallocatesWhatItLetsGo) {
  ConnectOptions options;
  options.max_prepared_statements = 2;
  auto connection = Connect(options);
  ASSERT_NE(connection, nullptr);
  for (const char* sql : {"SELECT 1 AS n", "SELECT 2 AS n", "SELECT 3 AS n", "SELECT 1 AS n"}) {
    auto done = connection->ExecPrepared("select a constant", sql, std::span<const Param>());
    ASSERT_TRUE(done.ok()) << done.status().ToString();
  }
  EXPECT_EQ(connection->prepared_statements(), 2U);
  EXPECT_EQ(ServerPrepared(*connection), 2);
}

TEST_F(PreparedTest, DiscardAllIsNoticedAndTheStatementPreparedAgain) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Exec("create", "CREATE TABLE t(n BIGINT PRIMARY KEY)").ok());
  ASSERT_TRUE(Insert(*connection, 1).ok());
  ASSERT_TRUE(connection->ExecScript("discard the session", "DISCARD ALL").ok());
  EXPECT_EQ(connection->prepared_statements(), 0U);
  auto again = Insert(*connection, 2);
  EXPECT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(ServerPrepared(*connection), 1);
}

TEST_F(PreparedTest, AStatementTheServerLostIsPreparedAgainOutsideATransaction) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Exec("create", "CREATE TABLE t(n BIGINT PRIMARY KEY)").ok());
  ASSERT_TRUE(Insert(*connection, 1).ok());
  // Behind the cache's back (the tag names no "ALL"): the next run meets SQLSTATE 26000.
  ASSERT_TRUE(connection->Exec("drop every statement", "DEALLOCATE gpufed_1").ok());
  auto again = Insert(*connection, 2);
  EXPECT_TRUE(again.ok()) << again.status().ToString();
  auto count = connection->Exec("count", "SELECT count(*) AS n FROM t");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->Int64(0, "n").value(), 2);
}

TEST_F(PreparedTest, AStatementTheServerLostInsideATransactionAbortsIt) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Exec("create", "CREATE TABLE t(n BIGINT PRIMARY KEY)").ok());
  ASSERT_TRUE(Insert(*connection, 1).ok());
  {
    auto tx = Transaction::Begin(*connection, "insert two");
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(connection->Exec("drop every statement", "DEALLOCATE gpufed_1").ok());
    auto lost = Insert(*connection, 2);
    ASSERT_FALSE(lost.ok());
    EXPECT_EQ(lost.status().code(), StatusCode::kAborted) << lost.status().ToString();
    // Never prepared inside the failed transaction: it runs unnamed and is refused.
    auto refused = Insert(*connection, 3);
    EXPECT_FALSE(refused.ok());
    EXPECT_EQ(connection->prepared_statements(), 0U);
  }
  auto after = Insert(*connection, 4);
  EXPECT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(connection->prepared_statements(), 1U);
  auto count = connection->Exec("count", "SELECT count(*) AS n FROM t");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->Int64(0, "n").value(), 2);  // 1 and 4
}

TEST_F(PreparedTest, DeferredCommandsRideWithTheNextStatement) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Exec("create", "CREATE TABLE t(n BIGINT PRIMARY KEY)").ok());
  ASSERT_TRUE(Insert(*connection, 1).ok());  // prepared: what follows counts the pipeline alone
  const uint64_t before = connection->round_trips();
  auto tx = Transaction::BeginDeferred(*connection, "insert in savepoints");
  EXPECT_FALSE(connection->InTransaction());  // nothing sent yet
  connection->Defer("savepoint", "SAVEPOINT s");
  ASSERT_TRUE(Insert(*connection, 2).ok());
  EXPECT_TRUE(connection->InTransaction());
  connection->Defer("release", "RELEASE SAVEPOINT s");
  connection->Defer("savepoint", "SAVEPOINT s");
  auto duplicate = Insert(*connection, 2);
  EXPECT_EQ(duplicate.status().code(), StatusCode::kAlreadyExists) << duplicate.status().ToString();
  connection->Defer("roll back to", "ROLLBACK TO SAVEPOINT s");
  connection->Defer("release", "RELEASE SAVEPOINT s");
  ASSERT_TRUE(Insert(*connection, 3).ok());
  EXPECT_TRUE(tx.Commit().ok());
  // BEGIN+SAVEPOINT+INSERT, RELEASE+SAVEPOINT+INSERT, ROLLBACK TO+RELEASE+INSERT, COMMIT.
  EXPECT_EQ(connection->round_trips() - before, 4U);
  auto count = connection->Exec("count", "SELECT count(*) AS n FROM t");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(count->Int64(0, "n").value(), 3);
}

TEST_F(PreparedTest, AFailedDeferredCommandFailsEverythingUntilTheTransactionEnds) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Exec("create", "CREATE TABLE t(n BIGINT PRIMARY KEY)").ok());
  auto tx = Transaction::BeginDeferred(*connection, "insert");
  connection->Defer("savepoint a", "SAVEPOINT a");
  ASSERT_TRUE(Insert(*connection, 1).ok());
  // A release of a savepoint that does not exist: refused, and the insert after it in the
  // pipeline does not run.
  connection->Defer("release b", "RELEASE SAVEPOINT b");
  auto failed = Insert(*connection, 2);
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.status().message(), HasSubstr("release b"));
  // A ROLLBACK TO the older savepoint would make the transaction usable again, and then
  // commit what came before as if nothing had failed: it is refused with the first error.
  connection->Defer("roll back to a", "ROLLBACK TO SAVEPOINT a");
  auto after = Insert(*connection, 3);
  EXPECT_THAT(after.status().message(), HasSubstr("release b"));
  Status committed = tx.Commit();
  EXPECT_FALSE(committed.ok());
  EXPECT_FALSE(connection->InTransaction());  // ended, not left to the next BEGIN
  auto count = connection->Exec("count", "SELECT count(*) AS n FROM t");
  ASSERT_TRUE(count.ok()) << count.status().ToString();
  EXPECT_EQ(count->Int64(0, "n").value(), 0);
}

// A deferred statement (a write whose reply is not read) that fails last before the next
// call is that call's error, and the caller's savepoints are as it thinks: a ROLLBACK TO
// undoes it alone and the transaction goes on.
TEST_F(PreparedTest, ADeferredStatementThatFailsLastLeavesItsSavepointUsable) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Exec("create", "CREATE TABLE t(n BIGINT PRIMARY KEY)").ok());
  const uint64_t before = connection->round_trips();
  auto tx = Transaction::BeginDeferred(*connection, "insert in savepoints");
  connection->Defer("savepoint", "SAVEPOINT s");
  connection->DeferStatement("insert a row", "INSERT INTO t(n) VALUES($1)", {Param(int64_t{1})});
  ASSERT_TRUE(Insert(*connection, 2).ok());  // BEGIN, SAVEPOINT, both inserts: one round trip
  EXPECT_EQ(connection->round_trips() - before, 1U);
  connection->Defer("release", "RELEASE SAVEPOINT s");
  connection->Defer("savepoint", "SAVEPOINT s");
  connection->DeferStatement("insert a duplicate", "INSERT INTO t(n) VALUES($1)", {Param(int64_t{1})});
  auto failed = Insert(*connection, 3);  // does not run
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kAlreadyExists) << failed.status().ToString();
  EXPECT_THAT(failed.status().message(), HasSubstr("insert a duplicate"));
  connection->Defer("roll back to", "ROLLBACK TO SAVEPOINT s");
  connection->Defer("release", "RELEASE SAVEPOINT s");
  connection->DeferStatement("insert a row", "INSERT INTO t(n) VALUES($1)", {Param(int64_t{4})});
  EXPECT_TRUE(tx.Commit().ok());
  auto rows = connection->Exec("read", "SELECT string_agg(n::text, ',' ORDER BY n) AS ns FROM t");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows->Text(0, "ns"), "1,2,4");
  EXPECT_EQ(connection->prepared_statements(), 1U);  // one text, prepared once
}

// Several statements in one pipeline (a submission group's rows): the first that fails is
// the call's error, those after it do not run, and the savepoint set before them undoes
// the lot; a savepoint command queued after the failure poisons instead.
TEST_F(PreparedTest, ADeferredStatementThatFailsBeforeOtherStatementsLeavesTheSavepointBeforeItUsable) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Exec("create", "CREATE TABLE t(n BIGINT PRIMARY KEY)").ok());
  ASSERT_TRUE(Insert(*connection, 1).ok());
  auto tx = Transaction::BeginDeferred(*connection, "insert a group");
  connection->Defer("savepoint", "SAVEPOINT g");
  connection->DeferStatement("insert 2", "INSERT INTO t(n) VALUES($1)", {Param(int64_t{2})});
  connection->DeferStatement("insert a duplicate", "INSERT INTO t(n) VALUES($1)", {Param(int64_t{1})});
  connection->DeferStatement("insert 3", "INSERT INTO t(n) VALUES($1)", {Param(int64_t{3})});
  auto failed = Insert(*connection, 4);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), StatusCode::kAlreadyExists) << failed.status().ToString();
  EXPECT_THAT(failed.status().message(), HasSubstr("insert a duplicate"));
  connection->Defer("roll back to", "ROLLBACK TO SAVEPOINT g");
  connection->Defer("release", "RELEASE SAVEPOINT g");
  ASSERT_TRUE(Insert(*connection, 5).ok());
  EXPECT_TRUE(tx.Commit().ok());
  auto rows = connection->Exec("read", "SELECT string_agg(n::text, ',' ORDER BY n) AS ns FROM t");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows->Text(0, "ns"), "1,5");

  auto second = Transaction::BeginDeferred(*connection, "a savepoint after the failure");
  connection->Defer("savepoint", "SAVEPOINT g");
  connection->DeferStatement("insert a duplicate", "INSERT INTO t(n) VALUES($1)", {Param(int64_t{1})});
  connection->Defer("savepoint h", "SAVEPOINT h");
  ASSERT_FALSE(Insert(*connection, 6).ok());
  connection->Defer("roll back to", "ROLLBACK TO SAVEPOINT g");
  auto after = Insert(*connection, 7);
  EXPECT_THAT(after.status().message(), HasSubstr("insert a duplicate"));  // poisoned
  EXPECT_FALSE(second.Commit().ok());
}

TEST_F(PreparedTest, ADeferredBeginThatNeverRanIsNotRolledBack) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  const uint64_t before = connection->round_trips();
  {
    auto tx = Transaction::BeginDeferred(*connection, "nothing");
    EXPECT_EQ(connection->deferred(), 1U);
  }
  EXPECT_EQ(connection->deferred(), 0U);
  EXPECT_EQ(connection->round_trips(), before);
}

TEST_F(PreparedTest, APipelinedReplyPastTheLimitsFailsAndTheConnectionStaysUsable) {
  ConnectOptions options;
  options.limits.max_rows = 100;
  auto connection = Connect(options);
  ASSERT_NE(connection, nullptr);
  auto tx = Transaction::BeginDeferred(*connection, "read many");
  auto many =
      connection->ExecPrepared("read many rows", "SELECT generate_series(1, 1000000) AS n", std::span<const Param>());
  EXPECT_EQ(many.status().code(), StatusCode::kResourceExhausted) << many.status().ToString();
  EXPECT_TRUE(connection->Healthy());
  EXPECT_TRUE(tx.Rollback().ok());
  auto within =
      connection->ExecPrepared("read a few rows", "SELECT generate_series(1, 100) AS n", std::span<const Param>());
  ASSERT_TRUE(within.ok()) << within.status().ToString();
  EXPECT_EQ(within->size(), 100U);
}

}  // namespace
}  // namespace gpufed::pg
