#pragma once
// A transaction on one Connection: BEGIN at Begin, COMMIT at Commit, ROLLBACK when it is
// destroyed without a successful Commit (an early return, an error), so no code path
// leaves a transaction open on a pooled or reused connection.
#include <string>
#include <string_view>

#include "controller/pg/connection.h"

namespace gpufed::pg {

enum class Isolation { kReadCommitted, kRepeatableRead, kSerializable };

class Transaction {
 public:
  // Errors as Connection::Exec's.
  static Result<Transaction> Begin(Connection& connection, std::string_view purpose,
                                   Isolation isolation = Isolation::kReadCommitted);
  // BEGIN deferred (Connection::Defer): sent with the transaction's first statement, in
  // one round trip. Nothing is sent here, so nothing fails here: a BEGIN the server
  // refuses fails that first statement (which then does not run).
  static Transaction BeginDeferred(Connection& connection, std::string_view purpose,
                                   Isolation isolation = Isolation::kReadCommitted);
  ~Transaction();
  Transaction(Transaction&& other) noexcept : connection_(other.connection_), purpose_(std::move(other.purpose_)) {
    other.connection_ = nullptr;
  }
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Result<Rows> Exec(std::string_view purpose, std::string_view sql, std::initializer_list<Param> params = {});
  Result<Rows> Exec(std::string_view purpose, std::string_view sql, std::span<const Param> params);

  Result<Rows> ExecScript(std::string_view purpose, std::string_view script);

  // Commits. A transaction in which a statement failed cannot commit: PostgreSQL answers
  // such a COMMIT with ROLLBACK, which is returned as Aborted, never as OK. After Commit,
  // whatever it returned, the transaction is over and the destructor does nothing.
  Status Commit();
  // Rolls back now, for a caller that reports the ROLLBACK's own outcome (controller/pgstore
  // behind store::Connection::Rollback). Afterwards the destructor does nothing.
  Status Rollback();

  Connection& connection() { return *connection_; }

 private:
  Transaction(Connection& connection, std::string purpose) : connection_(&connection), purpose_(std::move(purpose)) {}

  Connection* connection_;  // nullptr once committed, rolled back or moved from
  std::string purpose_;
};

}  // namespace gpufed::pg
