#pragma once
// A lease as controller/ha keeps one, for pgjournal's tests of fenced writers (the journal
// and the snapshots): one row's epoch, read FOR SHARE inside each write transaction, and a
// takeover that raises it. Header-only, for this folder's tests.
#include <cstdint>
#include <functional>

#include <gtest/gtest.h>

#include "controller/common/status.h"
#include "controller/pg/connection.h"
#include "controller/pg/transaction.h"

namespace gpufed::pgjournal::testing {

// Creates the lease at epoch 1 through `setup` (a connection to the test's database).
inline void CreateTestLease(pg::Connection& setup) {
  ASSERT_TRUE(setup.Exec("lease", "CREATE TABLE test_lease (epoch bigint NOT NULL)").ok());
  ASSERT_TRUE(setup.Exec("lease", "INSERT INTO test_lease VALUES (1)").ok());
}

// Another replica takes the lease: epoch 2.
inline void TakeOverTestLease(pg::Connection& setup) {
  ASSERT_TRUE(setup.Exec("take over", "UPDATE test_lease SET epoch = 2").ok());
}

// The fence of the writer that leads `epoch`: FailedPrecondition once the lease moved on.
inline std::function<Status(pg::Transaction&)> TestFence(int64_t epoch) {
  return [epoch](pg::Transaction& tx) -> Status {
    auto rows = tx.Exec("check the fence", "SELECT epoch FROM test_lease FOR SHARE");
    if (!rows.ok()) return rows.status();
    return rows->Int64(0, "epoch").value() == epoch ? Status::Ok() : FailedPrecondition("fenced");
  };
}

// The same fence sent with the transaction's next statement, as ha::DeferFenceCheck sends
// it: once the lease moved on, that statement fails (a division by zero) and does not run.
inline std::function<Status(pg::Transaction&)> TestDeferredFence(int64_t epoch) {
  return [epoch](pg::Transaction& tx) -> Status {
    tx.connection().DeferStatement("check the fence", "SELECT 1 / (epoch = $1)::int AS held FROM test_lease FOR SHARE",
                                   {pg::Param(epoch)});
    return Status::Ok();
  };
}

}  // namespace gpufed::pgjournal::testing
