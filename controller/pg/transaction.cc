#include "controller/pg/transaction.h"

namespace gpufed::pg {
namespace {

std::string_view BeginStatement(Isolation isolation) {
  switch (isolation) {
    case Isolation::kReadCommitted: return "BEGIN ISOLATION LEVEL READ COMMITTED";
    case Isolation::kRepeatableRead: return "BEGIN ISOLATION LEVEL REPEATABLE READ";
    case Isolation::kSerializable: return "BEGIN ISOLATION LEVEL SERIALIZABLE";
  }
  return "BEGIN";
}

}  // namespace

Result<Transaction> Transaction::Begin(Connection& connection, std::string_view purpose, Isolation isolation) {
  auto begun = connection.Exec(std::string("begin: ") + std::string(purpose), BeginStatement(isolation));
  if (!begun.ok()) return begun.status();
  return Transaction(connection, std::string(purpose));
}

Transaction Transaction::BeginDeferred(Connection& connection, std::string_view purpose, Isolation isolation) {
  connection.Defer(std::string("begin: ") + std::string(purpose), std::string(BeginStatement(isolation)));
  return Transaction(connection, std::string(purpose));
}

Transaction::~Transaction() {
  if (connection_ == nullptr || !connection_->Healthy()) return;
  // What was deferred belongs to this transaction (a BEGIN, savepoints): moot now. When
  // nothing of it reached the server there is nothing to roll back.
  connection_->DropDeferred();
  if (!connection_->InTransaction()) return;
  // Nothing to report to: a failed ROLLBACK leaves the server to end the transaction
  // when the session ends (idle_in_transaction_session_timeout bounds it).
  (void)connection_->Exec("roll back: " + purpose_, "ROLLBACK");
}

Result<Rows> Transaction::Exec(std::string_view purpose, std::string_view sql, std::initializer_list<Param> params) {
  return Exec(purpose, sql, std::span<const Param>(params.begin(), params.size()));
}

Result<Rows> Transaction::Exec(std::string_view purpose, std::string_view sql, std::span<const Param> params) {
  if (connection_ == nullptr) return FailedPrecondition(std::string(purpose) + ": the transaction is over");
  return connection_->Exec(purpose, sql, params);
}

Result<Rows> Transaction::ExecScript(std::string_view purpose, std::string_view script) {
  if (connection_ == nullptr) return FailedPrecondition(std::string(purpose) + ": the transaction is over");
  return connection_->ExecScript(purpose, script);
}

Status Transaction::Commit() {
  if (connection_ == nullptr) return FailedPrecondition("commit: " + purpose_ + ": the transaction is over");
  Connection* connection = connection_;
  connection_ = nullptr;
  auto committed = connection->Exec("commit: " + purpose_, "COMMIT");
  if (!committed.ok() && !connection->Healthy()) {
    // The COMMIT may have reached the server before the connection broke: its outcome is
    // unknown, and a caller must not report either (re-read, or retry an idempotent write).
    return Unavailable("commit: " + purpose_ +
                       ": the connection was lost during COMMIT; the transaction may or may "
                       "not have committed");
  }
  if (!committed.ok()) {
    // A deferred command ahead of the COMMIT failed, so the COMMIT did not run and the
    // server's transaction is still open (and failed): it is ended here, not left to the
    // next BEGIN.
    if (connection->InTransaction()) (void)connection->Exec("roll back: " + purpose_, "ROLLBACK");
    return committed.status();
  }
  if (committed->command_tag() != "COMMIT") {
    return {StatusCode::kAborted,
            "commit: " + purpose_ + ": a statement of the transaction failed; it was rolled back"};
  }
  return Status::Ok();
}

Status Transaction::Rollback() {
  if (connection_ == nullptr) return FailedPrecondition("roll back: " + purpose_ + ": the transaction is over");
  Connection* connection = connection_;
  connection_ = nullptr;
  connection->DropDeferred();  // this transaction's own: moot
  if (connection->Healthy() && !connection->InTransaction()) return Status::Ok();  // nothing reached the server
  auto rolled_back = connection->Exec("roll back: " + purpose_, "ROLLBACK");
  return rolled_back.ok() ? Status::Ok() : rolled_back.status();
}

}  // namespace gpufed::pg
