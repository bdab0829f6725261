#pragma once
// A store::Statement over the pg layer: binds kept as PostgreSQL's text forms, the
// statement run by its first Step (libpq's extended protocol, `$n` passed as they are) and
// its reply, bounded by the pg layer's ReplyLimits, read row by row by the Steps after.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/pg/connection.h"
#include "controller/pg/rows.h"
#include "controller/store/sql.h"

namespace gpufed::pgstore {

// The text form of a double that PostgreSQL's float8 input reads back to the same bits:
// the shortest round-trip digits (std::to_chars), `Infinity`, `-Infinity` or `NaN`.
std::string DoubleText(double v);

// What an error names a statement by: its first words, whitespace collapsed (the SQL is
// constant text, never a value, so naming it leaks nothing).
std::string StatementPurpose(const std::string& sql);

// What a statement prepared by key (store::RowLookup::kByKey) runs between, in its
// transaction: the planner may only look rows up by an index (no scan of the whole table,
// no hash or merge join), and plans it afresh at each run, so no plan made while the
// table was small is kept as it grows. The second sets each back to the session's own
// value (set_config's NULL: its role's, its database's or the server's), so the
// transaction's other statements are planned as before. Both ride with the statement.
inline constexpr const char* kPlanByKey =
    "SELECT set_config('enable_seqscan', 'off', true), set_config('enable_hashjoin', 'off', true), "
    "set_config('enable_mergejoin', 'off', true), set_config('plan_cache_mode', 'force_custom_plan', true)";
inline constexpr const char* kPlanAsSession =
    "SELECT set_config('enable_seqscan', NULL, true), set_config('enable_hashjoin', NULL, true), "
    "set_config('enable_mergejoin', NULL, true), set_config('plan_cache_mode', NULL, true)";

class PgStatement final : public store::Statement {
 public:
  // `read_only`: a write refused by the session (default_transaction_read_only) is
  // FailedPrecondition, as a read-only SQLite store's.
  // `owner`: the store connection that prepared it, asked whether a transaction is open.
  // `lookup`: kByKey runs it planned by key (kPlanByKey) inside a transaction; outside one
  // it is planned as the server chooses.
  PgStatement(pg::Connection& connection, const store::Connection& owner, std::string sql, bool read_only,
              store::RowLookup lookup = store::RowLookup::kPlanned)
      : connection_(connection),
        owner_(owner),
        sql_(std::move(sql)),
        purpose_(StatementPurpose(sql_)),
        read_only_(read_only),
        by_key_(lookup == store::RowLookup::kByKey) {}

  store::Statement& Bind(int i, const std::string& v) override { return Set(i, v, /*is_text=*/true); }
  store::Statement& Bind(int i, int64_t v) override { return Set(i, std::to_string(v), /*is_text=*/false); }
  using store::Statement::Bind;
  store::Statement& Bind(int i, double v) override { return Set(i, DoubleText(v), /*is_text=*/false); }
  // The first Step after a Bind (or after the last row) runs the statement, as SQLite's
  // step resets a statement that was done.
  Result<bool> Step() override;
  // Inside a transaction: checked (text) and queued on the connection
  // (pg::Connection::DeferStatement), sent with the next statement. Outside one it runs at
  // once: nothing would be sure to follow it.
  Status RunWithNext() override;
  int64_t RowsChanged() const override { return changes_; }

  std::string Text(int col) const override;
  int64_t Int(int col) const override;
  double Real(int col) const override;

 private:
  struct Value {
    std::optional<std::string> text;  // unset: never bound, sent as NULL (SQLite's rule)
    bool is_text = false;             // bound as a string: checked before it is sent
  };
  store::Statement& Set(int i, std::string text, bool is_text);
  // InvalidArgument for text PostgreSQL's TEXT cannot hold (a NUL byte: libpq would also
  // cut the value there; invalid UTF-8), naming the statement and the parameter.
  Status CheckText() const;
  Status Run();
  std::optional<std::string> Cell(int col) const;

  std::vector<pg::Param> Params() const;
  // Inside a transaction, for a statement planned by key: queues kPlanByKey before it
  // (Before) and kPlanAsSession after it (After), each sent with the next statement.
  bool PlansByKey() const { return by_key_ && owner_.InTransaction(); }
  void Before();
  void After();

  pg::Connection& connection_;
  const store::Connection& owner_;
  const std::string sql_;
  const std::string purpose_;
  const bool read_only_;
  const bool by_key_;
  std::vector<Value> params_;  // $1 is params_[0]
  std::optional<pg::Rows> rows_;
  size_t next_row_ = 0;  // the current row is next_row_ - 1
  int64_t changes_ = 0;
};

}  // namespace gpufed::pgstore
