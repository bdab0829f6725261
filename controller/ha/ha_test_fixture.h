#pragma once
// A test database with the lease table, and electors on it with short, virtual-time
// friendly durations.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "controller/common/clock.h"
#include "controller/ha/elector.h"
#include "controller/ha/lease.h"
#include "controller/pg/testing/pg_test_server.h"

namespace gpufed::ha {

class HaTest : public pg::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    setup_ = Connect();
    ASSERT_NE(setup_, nullptr);
    Status migrated = pg::Migrate(*setup_, kMigrationComponent, LeaseMigrations());
    ASSERT_TRUE(migrated.ok()) << migrated.ToString();
    ASSERT_TRUE(setup_->Exec("create the fenced table", "CREATE TABLE fenced_writes (what text NOT NULL)").ok());
  }

  // Durations a test can wait out on the database's clock in about a second.
  static ElectorOptions ShortOptions(const std::string& identity) {
    return Options(identity, Duration::FromMillis(1200), Duration::FromMillis(800), Duration::FromMillis(200));
  }
  // For tests that never wait for the database's clock: a lease no loaded CI machine
  // outlasts between two steps, so only the virtual clocks decide.
  static ElectorOptions LongOptions(const std::string& identity) {
    return Options(identity, Duration::FromSeconds(60), Duration::FromSeconds(40), Duration::FromSeconds(2));
  }
  static ElectorOptions Options(const std::string& identity, Duration lease, Duration renew_deadline, Duration retry) {
    ElectorOptions options;
    options.identity = identity;
    options.lease_duration = lease;
    options.renew_deadline = renew_deadline;
    options.retry_period = retry;
    return options;
  }

  ConnectFunction Connector() const {
    return [this]() -> Result<std::unique_ptr<pg::Connection>> { return pg::Connection::Open(SocketPolicy()); };
  }

  std::unique_ptr<Elector> MakeElector(const ElectorOptions& options, const Clock& clock) const {
    auto elector = Elector::Create(options, clock, Connector());
    EXPECT_TRUE(elector.ok()) << elector.status().ToString();
    return elector.ok() ? std::move(elector).value() : nullptr;
  }

  int64_t Count(pg::Connection& connection, const std::string& what) const {
    auto rows =
        connection.Exec("count fenced writes", "SELECT count(*) AS n FROM fenced_writes WHERE what = $1", {what});
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    return rows.ok() ? *rows->Int64(0, "n") : -1;
  }

  static Status InsertWrite(pg::Transaction& tx, const std::string& what) {
    auto inserted = tx.Exec("insert a fenced write", "INSERT INTO fenced_writes (what) VALUES ($1)", {what});
    return inserted.ok() ? Status::Ok() : inserted.status();
  }

  // Polls `condition` until it holds or `limit` (real time) passes: waiting for the
  // database's clock or another session, never a sleep that stands in for an event.
  static bool PollUntil(const std::function<bool()>& condition,
                        std::chrono::milliseconds limit = std::chrono::milliseconds(10000)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (condition()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return condition();
  }

  // True once the lease has expired by the database's clock.
  bool LeaseExpired(const std::string& name = "gpufed-leader") const {
    auto lease = ReadLease(*setup_, name);
    return lease.ok() && lease->has_value() && (*lease)->expired;
  }

  std::unique_ptr<pg::Connection> setup_;
};

}  // namespace gpufed::ha
