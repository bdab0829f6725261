#pragma once
// The real PostgreSQL 15 the tests of controller/pg and controller/ha run against, started
// by pg-cluster.sh (see there: the postgres user, a Unix socket and TLS on 127.0.0.1, a
// throwaway CA, the `gpufed` role's password in a passfile only).
//
// Under CTest the cluster is the `pg_cluster` fixture's (FIXTURES_SETUP/CLEANUP: one
// cluster for every test of the run), named by GPUFED_TEST_PG_STATE. A test binary run by
// hand starts its own on first use and stops it (by its PID) when the process exits.
//
// PgTest gives each test a database of its own (created from template0, dropped at the
// end), so tests neither see each other's tables nor depend on their order.
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "controller/pg/connection.h"
#include "controller/pg/connection_policy.h"

namespace gpufed::pg::testing {

struct ServerInfo {
  std::string socket_dir;
  std::string port;
  std::string ca;        // the CA that issued the server's certificate
  std::string wrong_ca;  // an unrelated CA
  std::string passfile;  // holds the gpufed role's password
  std::string missing;   // non-empty: PostgreSQL 15 is not installed (why)
  std::string error;     // non-empty: the cluster could not be started or read
};

// The shared server of this process (started or read once).
const ServerInfo& SharedServer();

// True when CI is set: a missing dependency then fails instead of skipping.
bool DependenciesRequired();

class PgTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;

  // The test's database as gpufed over the Unix socket (password from the passfile).
  ConnectionPolicy SocketPolicy() const;
  // The test's database as gpufed over TCP and TLS (verify-full against `ca`).
  std::string TlsConninfo(const std::string& ca) const;
  // Connects as SocketPolicy() says; fails the test when it cannot.
  std::unique_ptr<Connection> Connect(const ConnectOptions& options = {}) const;
  // A superuser connection to the test's database (pg_terminate_backend, pg_locks, ...).
  std::unique_ptr<Connection> ConnectAsAdmin() const;

  const ServerInfo& server() const { return *server_; }
  const std::string& database() const { return database_; }

 private:
  const ServerInfo* server_ = nullptr;
  std::string database_;
};

}  // namespace gpufed::pg::testing
