// controller/pg against a real PostgreSQL 15 (testing/pg-cluster.sh): TLS verification,
// the passfile, SQLSTATE mapping, reply limits and transactions.
#include "controller/pg/connection.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/pg/testing/pg_test_server.h"
#include "controller/pg/transaction.h"

namespace gpufed::pg {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::PgTest;

EnvironmentLookup NoEnvironment() {
  return [](const char*) -> const char* { return nullptr; };
}

class ConnectionTest : public PgTest {};

TEST_F(ConnectionTest, VerifyFullConnectsWithTheRightCa) {
  auto policy = ConnectionPolicy::Parse(TlsConninfo(server().ca), {}, NoEnvironment());
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  const auto start = std::chrono::steady_clock::now();
  auto connection = Connection::Open(*policy);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(connection.ok()) << connection.status().ToString();
  EXPECT_TRUE((*connection)->UsesTls());
  auto rows =
      (*connection)->Exec("read the session's TLS state", "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows->Bool(0, "ssl"), true);
  const auto socket_start = std::chrono::steady_clock::now();
  auto over_socket = Connection::Open(SocketPolicy());
  const auto socket_took = std::chrono::steady_clock::now() - socket_start;
  ASSERT_TRUE(over_socket.ok()) << over_socket.status().ToString();
  std::cout << "[ MEASURE  ] connect and set the session: TLS verify-full + SCRAM "
            << std::chrono::duration_cast<std::chrono::microseconds>(took).count() << " us, Unix socket + SCRAM "
            << std::chrono::duration_cast<std::chrono::microseconds>(socket_took).count() << " us\n";
}

TEST_F(ConnectionTest, VerifyFullFailsWithAnUnrelatedCa) {
  auto policy = ConnectionPolicy::Parse(TlsConninfo(server().wrong_ca), {}, NoEnvironment());
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  auto connection = Connection::Open(*policy);
  ASSERT_FALSE(connection.ok());
  EXPECT_EQ(connection.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(connection.status().message(), HasSubstr("certificate verify failed"));
}

TEST_F(ConnectionTest, VerifyFullFailsWhenTheCertificateNamesAnotherHost) {
  // Connects to 127.0.0.1 but checks the certificate against a name it does not carry.
  auto policy = ConnectionPolicy::Parse(
      "host=db.not-in-the-certificate.test hostaddr=127.0.0.1 port=" + server().port + " dbname=" + database() +
          " user=gpufed sslmode=verify-full sslrootcert=" + server().ca + " passfile=" + server().passfile,
      {}, NoEnvironment());
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  auto connection = Connection::Open(*policy);
  ASSERT_FALSE(connection.ok());
  EXPECT_EQ(connection.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(connection.status().message(), HasSubstr("does not match host name"));
}

TEST_F(ConnectionTest, AMultiHostUriFollowsTheHostThatAnswers) {
  // The first host refuses (nothing listens on port 1); libpq goes on to the second, which
  // must be a primary (target_session_attrs=read-write), over verify-full TLS.
  auto policy = ConnectionPolicy::Parse("postgresql://gpufed@127.0.0.1:1,localhost:" + server().port + "/" +
                                            database() + "?sslmode=verify-full&sslrootcert=" + server().ca +
                                            "&passfile=" + server().passfile + "&target_session_attrs=read-write",
                                        {}, NoEnvironment());
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  EXPECT_EQ(policy->hosts(), (std::vector<std::string>{"127.0.0.1", "localhost"}));
  auto connection = Connection::Open(*policy);
  ASSERT_TRUE(connection.ok()) << connection.status().ToString();
  EXPECT_TRUE((*connection)->UsesTls());
  auto rows = (*connection)->Exec("ask whether this is a primary", "SELECT NOT pg_is_in_recovery() AS primary_server");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_TRUE(*rows->Bool(0, "primary_server"));
}

TEST_F(ConnectionTest, PasswordComesFromThePassfileOnly) {
  auto with_passfile = Connection::Open(SocketPolicy());
  ASSERT_TRUE(with_passfile.ok()) << with_passfile.status().ToString();

  // An empty passfile (0600): the server asks for a password libpq does not have.
  const std::string empty_passfile = server().passfile + "-empty-" + database();
  {
    std::ofstream(empty_passfile).flush();
  }
  std::filesystem::permissions(empty_passfile,
                               std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  auto policy = SocketPolicy().With("passfile", empty_passfile);
  ASSERT_TRUE(policy.ok());
  auto without = Connection::Open(*policy);
  std::filesystem::remove(empty_passfile);
  ASSERT_FALSE(without.ok());
  EXPECT_EQ(without.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(without.status().message(), HasSubstr("password"));
}

TEST_F(ConnectionTest, SqlErrorsMapToStatusCodes) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Exec("create a table", "CREATE TABLE t (k text PRIMARY KEY, n integer)").ok());
  ASSERT_TRUE(connection->Exec("insert a row", "INSERT INTO t VALUES ($1, $2)", {"secret-key-1", 1}).ok());

  auto duplicate = connection->Exec("insert a row again", "INSERT INTO t VALUES ($1, $2)", {"secret-key-1", 2});
  ASSERT_FALSE(duplicate.ok());
  EXPECT_EQ(duplicate.status().code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(duplicate.status().message(), HasSubstr("insert a row again"));
  EXPECT_THAT(duplicate.status().message(), HasSubstr("t_pkey"));
  EXPECT_THAT(duplicate.status().message(), Not(HasSubstr("secret-key-1")));

  auto bad_value = connection->Exec("count the rows", "SELECT count(*) FROM t WHERE n = $1", {"secret-not-a-number"});
  ASSERT_FALSE(bad_value.ok());
  EXPECT_EQ(bad_value.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad_value.status().message(), Not(HasSubstr("secret-not-a-number")));

  auto missing_table = connection->Exec("read a table", "SELECT * FROM no_such_table");
  EXPECT_EQ(missing_table.status().code(), StatusCode::kInternal);

  for (const auto& [sqlstate, code] :
       {std::pair{"40001", StatusCode::kAborted}, std::pair{"40P01", StatusCode::kAborted},
        std::pair{"57P01", StatusCode::kUnavailable}}) {
    auto raised =
        connection->Exec("raise a condition", std::string("DO $$ BEGIN RAISE EXCEPTION 'planted' USING ERRCODE = '") +
                                                  sqlstate + "'; END $$");
    EXPECT_EQ(raised.status().code(), code) << sqlstate << ": " << raised.status().ToString();
  }
}

TEST_F(ConnectionTest, StatementTimeoutIsSetAtConnect) {
  ConnectOptions options;
  options.statement_timeout = Duration::FromMillis(100);
  auto connection = Connect(options);
  ASSERT_NE(connection, nullptr);
  auto slow = connection->Exec("wait", "SELECT pg_sleep(5)");
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(connection->Exec("read after the timeout", "SELECT 1").ok());
}

TEST_F(ConnectionTest, ALostConnectionIsUnavailable) {
  auto connection = Connect();
  auto admin = ConnectAsAdmin();
  ASSERT_NE(connection, nullptr);
  ASSERT_NE(admin, nullptr);
  ASSERT_TRUE(admin->Exec("end the session", "SELECT pg_terminate_backend($1)", {connection->BackendPid()}).ok());
  auto after = connection->Exec("read after the end", "SELECT 1");
  ASSERT_FALSE(after.ok());
  EXPECT_EQ(after.status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(connection->Healthy());
}

TEST_F(ConnectionTest, RepliesPastTheLimitsFailAndTheConnectionStaysUsable) {
  ConnectOptions options;
  options.limits.max_rows = 100;
  options.limits.max_bytes = 4096;
  auto connection = Connect(options);
  ASSERT_NE(connection, nullptr);
  auto many = connection->Exec("read many rows", "SELECT generate_series(1, 1000000) AS n");
  ASSERT_FALSE(many.ok());
  EXPECT_EQ(many.status().code(), StatusCode::kResourceExhausted);
  auto wide = connection->Exec("read a wide row", "SELECT repeat('x', 10000) AS text");
  EXPECT_EQ(wide.status().code(), StatusCode::kResourceExhausted);
  auto within = connection->Exec("read a few rows", "SELECT generate_series(1, 100) AS n");
  ASSERT_TRUE(within.ok()) << within.status().ToString();
  EXPECT_EQ(within->size(), 100U);
  EXPECT_EQ(*within->Int64(99, "n"), 100);
}

TEST_F(ConnectionTest, TypedColumnsAndNulls) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  auto rows = connection->Exec("read typed values",
                               "SELECT $1::bigint AS big, $2::text AS name, NULL::text AS none, true AS yes",
                               {int64_t{9007199254740993}, Param::Null()});
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows->Int64(0, "big"), int64_t{9007199254740993});
  EXPECT_TRUE(*rows->IsNull(0, "name"));
  EXPECT_FALSE(rows->Text(0, "none").ok());
  EXPECT_EQ(*rows->Bool(0, "yes"), true);
  EXPECT_EQ(rows->Int64(0, "nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(rows->Int64(1, "big").status().code(), StatusCode::kNotFound);
}

TEST_F(ConnectionTest, TransactionRollsBackWhenDestroyedWithoutCommit) {
  auto connection = Connect();
  ASSERT_NE(connection, nullptr);
  ASSERT_TRUE(connection->Exec("create a table", "CREATE TABLE t (n integer)").ok());
  {
    auto tx = Transaction::Begin(*connection, "insert and abandon");
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(tx->Exec("insert", "INSERT INTO t VALUES (1)").ok());
  }
  {
    auto tx = Transaction::Begin(*connection, "insert and commit");
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(tx->Exec("insert", "INSERT INTO t VALUES (2)").ok());
    ASSERT_TRUE(tx->Commit().ok());
  }
  {
    // A statement failed: COMMIT is answered with ROLLBACK, which is not success.
    auto tx = Transaction::Begin(*connection, "insert after an error");
    ASSERT_TRUE(tx.ok());
    ASSERT_TRUE(tx->Exec("insert", "INSERT INTO t VALUES (3)").ok());
    EXPECT_FALSE(tx->Exec("fail", "SELECT * FROM no_such_table").ok());
    Status committed = tx->Commit();
    EXPECT_EQ(committed.code(), StatusCode::kAborted) << committed.ToString();
  }
  auto rows = connection->Exec("read", "SELECT array_agg(n ORDER BY n)::text AS ns FROM t");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(*rows->Text(0, "ns"), "{2}");
}

}  // namespace
}  // namespace gpufed::pg
