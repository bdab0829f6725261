#pragma once
// A write the Store runs outside a transaction (SQLite's autocommit: RecordDecision,
// SetMeta, MarkAction), on a connection with a write guard (PgConnection::SetWriteGuard):
// each execution becomes its own transaction, BEGIN, the guard, the statement, COMMIT, so
// that no write of a deposed leader commits, whether the Store grouped it in a
// transaction or not. Inside a transaction the statement runs as it is (the transaction's
// Begin ran the guard).
#include <memory>

#include "controller/store/sql.h"

namespace gpufed::pgstore {

class FencedStatement final : public store::Statement {
 public:
  // `connection` (whose Begin runs the guard) must outlive the statement.
  FencedStatement(std::unique_ptr<store::Statement> inner, store::Connection& connection)
      : inner_(std::move(inner)), connection_(connection) {}

  store::Statement& Bind(int i, const std::string& v) override { return Forward(i, v); }
  store::Statement& Bind(int i, int64_t v) override { return Forward(i, v); }
  store::Statement& Bind(int i, double v) override { return Forward(i, v); }
  using store::Statement::Bind;
  // The first Step of an execution outside a transaction runs it in one of its own and
  // commits before it returns: its rows (read whole by that Step) are then walked by the
  // Steps after, and a caller that sees OK knows the write is committed.
  Result<bool> Step() override;
  // Inside a transaction the statement may ride with the next one (sql.h); alone it runs
  // in its own fenced transaction now.
  Status RunWithNext() override { return connection_.InTransaction() ? inner_->RunWithNext() : Run(); }
  int64_t RowsChanged() const override { return inner_->RowsChanged(); }
  std::string Text(int col) const override { return inner_->Text(col); }
  int64_t Int(int col) const override { return inner_->Int(col); }
  double Real(int col) const override { return inner_->Real(col); }

 private:
  template <typename T>
  store::Statement& Forward(int i, const T& v) {
    inner_->Bind(i, v);
    return *this;
  }

  std::unique_ptr<store::Statement> inner_;
  store::Connection& connection_;
  bool walking_ = false;  // an execution committed on its own is having its rows read
};

}  // namespace gpufed::pgstore
