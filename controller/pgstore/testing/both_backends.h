#pragma once
// The fixture of the Store tests that run on both backends (pgstore_test.cc,
// pgstore_groups_test.cc): each TEST_P runs once on SQLite (a file) and once on a real
// PostgreSQL 15 (the pg_cluster fixture, a database per test), so a behaviour that
// differs between the engines fails. Tests only.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>

#include "controller/pg/testing/pg_test_server.h"
#include "controller/pgstore/connection.h"
#include "controller/store/sqlite.h"
#include "controller/store/store.h"

namespace gpufed::pgstore::testing {

enum class Backend { kSqlite, kPostgres };

inline store::WorkloadRecord Record(const std::string& name, const std::string& tenant = "t") {
  store::WorkloadRecord r;
  r.name = name;
  r.tenant = tenant;
  r.source = "api";
  r.spec_text = "kind: Workload";
  return r;
}

class BothBackends : public pg::testing::PgTest, public ::testing::WithParamInterface<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kPostgres) {
      PgTest::SetUp();
      return;
    }
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = info->name();  // "Test/Sqlite"
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = ::testing::TempDir() + "/pgstore_test_" + name;
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (GetParam() == Backend::kPostgres) PgTest::TearDown();
  }

  // A Store on the test's database; a second call opens a second Store on the same one
  // (PostgreSQL: its own sessions, as a second replica's). On PostgreSQL it has the two
  // sessions a leader's Store has (runtime/app.cc): the loop's, and the submissions'.
  std::unique_ptr<store::Store> Open() {
    Result<std::unique_ptr<store::Store>> opened =
        GetParam() == Backend::kSqlite ? store::Store::Open(dir_ + "/gpufed.db")
                                       : store::Store::OpenOn(ConnectStore(false, "loop"), ConnectStore(false, "api"));
    EXPECT_TRUE(opened.ok()) << opened.status().ToString();
    return opened.ok() ? std::move(opened).value() : nullptr;
  }
  std::unique_ptr<store::Connection> ConnectStore(bool read_only = false, const std::string& writer = "") {
    Result<std::unique_ptr<PgConnection>> c = PgConnection::Adopt(Connect(), read_only, writer);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }
  // A bare connection of the test's backend, for statements the Store does not make.
  std::unique_ptr<store::Connection> Raw() {
    if (GetParam() == Backend::kPostgres) return ConnectStore();
    auto db = store::Database::Open(dir_ + "/raw.db");
    EXPECT_TRUE(db.ok());
    return std::move(db).value();
  }

  std::string dir_;
};

// For INSTANTIATE_TEST_SUITE_P: both backends, each case named after its backend.
inline auto EachBackend() { return ::testing::Values(Backend::kSqlite, Backend::kPostgres); }
inline std::string BackendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "Sqlite" : "Postgres";
}

}  // namespace gpufed::pgstore::testing
