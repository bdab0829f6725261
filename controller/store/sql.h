#pragma once
// What the Store needs of a SQL database, and nothing more: a connection that prepares and
// runs statements with typed binds and columns, transactions, the rows a statement changed,
// and the schema's version. The Store is written against this alone, so the same Store
// logic runs on SQLite (sqlite.h, the embedded default) and on the PostgreSQL backend
// issue 38 adds; the differences between the engines stay behind it, in each backend and
// in each dialect's DDL (schema.h).
//
// Portable SQL (what every statement the Store prepares or executes keeps to; README.md
// "Portable SQL" has the rules and sql_portability.h checks them):
//
// Placeholders are `$1`, `$2`, ...: PostgreSQL's own form, so libpq takes the text as it
// is. SQLite 3.40 reads `$1` as a named parameter ("$" followed by identifier characters,
// digits included) and numbers named parameters in order of first appearance, not by
// the digits: SQLite's backend maps each `$n` to its own index when it prepares the
// statement (so `$2` before `$1`, or `$1` twice, mean what PostgreSQL means) and refuses
// any other form. `?` was the other choice; it would have made the PostgreSQL backend
// rewrite every statement, and a rewriter has to tell a `?` in a string literal from a
// placeholder.
//
// Ids come back with `RETURNING`, never from a connection-wide "last insert id"; rows
// changed are the statement's (RowsChanged after it ran), not the connection's.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "controller/common/status.h"

namespace gpufed::store {

// The error of every write tried through a read-only connection (and Store).
inline constexpr const char* kReadOnlyRefusal = "the store is open read-only: nothing may be written";

// Which SQL dialect a connection speaks: it picks the schema's migrations (schema.h).
// Statements the Store prepares are the same text for every dialect.
enum class SqlDialect {
  kSqlite,    // SQLite 3.40 (Debian 12)
  kPostgres,  // PostgreSQL 15 (Debian 12); its backend is controller/pgstore (issue 38)
};

// How a statement finds the rows it writes (Connection::PrepareByKey).
enum class RowLookup {
  kPlanned,  // as the engine's planner chooses
  kByKey,    // one lookup by the table's primary key per row it lists
};

// A prepared statement. Binds and columns are typed; a bind stays until the statement
// goes. A statement must not outlive the connection that prepared it, and is used by one
// thread at a time (the Store's lock).
class Statement {
 public:
  virtual ~Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds `$i` (1-based). Booleans are bound as 0 or 1 (the schema keeps them INTEGER on
  // both engines).
  virtual Statement& Bind(int i, const std::string& v) = 0;
  virtual Statement& Bind(int i, int64_t v) = 0;
  Statement& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  virtual Statement& Bind(int i, double v) = 0;
  // Result<bool>: true when a row is ready, false when done. Errors map to codes that
  // drive retries: Unavailable (busy, I/O, full), AlreadyExists (a constraint), DataLoss
  // (not a database, corrupt), FailedPrecondition (read-only), Internal (anything else).
  virtual Result<bool> Step() = 0;
  // Runs to completion, discarding rows.
  Status Run() {
    while (true) {
      Result<bool> row = Step();
      if (!row.ok()) return row.status();
      if (!*row) return Status::Ok();
    }
  }
  // Runs a write whose reply the caller does not need before its next statement on this
  // connection: no rows, and RowsChanged is not read (it reads 0). Inside a transaction a
  // backend may send it with that next statement instead of waiting for it (PostgreSQL:
  // one round trip for both); its error is then that next statement's (or the COMMIT's),
  // which does not run. SQLite runs it at once, as Run.
  virtual Status RunWithNext() { return Run(); }
  // Rows the statement's own INSERT, UPDATE or DELETE changed once it ran to completion
  // (not rows a trigger changed, not an earlier statement's; an upsert's DO NOTHING is 0).
  virtual int64_t RowsChanged() const = 0;

  // Columns of the current row, 0-based. A NULL reads as "" or 0.
  virtual std::string Text(int col) const = 0;
  virtual int64_t Int(int col) const = 0;
  virtual double Real(int col) const = 0;

 protected:
  Statement() = default;
};

// A connection to one database, used by one thread at a time (the Store's lock).
class Connection {
 public:
  virtual ~Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  virtual SqlDialect dialect() const = 0;
  // Runs `sql`, which may hold several statements and no placeholders (DDL, savepoints).
  virtual Status Exec(const std::string& sql) = 0;
  // Prepares one statement (a backend may hand out a cached one). FailedPrecondition on a
  // read-only connection for a statement that would write; InvalidArgument for a
  // placeholder that is not `$n`.
  virtual Result<std::unique_ptr<Statement>> Prepare(const std::string& sql) = 0;
  // Prepares a write that joins a list of rows with a table on the table's primary key
  // (`UPDATE t ... FROM (VALUES ...) AS v WHERE t.key = v.column1`), to run as one lookup by
  // that key per listed row whatever the table's size. SQLite's planner does so on its own
  // (store_sql_test checks the plan). PostgreSQL's keeps a prepared statement's plan once
  // it judged it good, and for a table it saw small that is a hash join over a scan of
  // every row: a pass then read the whole workloads table (8 ms per 64 rows at 40,000
  // workloads, against 1 ms looked up), so its backend plans these statements as lookups
  // (pgstore/statement.h).
  virtual Result<std::unique_ptr<Statement>> PrepareByKey(const std::string& sql) { return Prepare(sql); }

  // A write transaction: SQLite's BEGIN IMMEDIATE (the write lock taken at once, so a
  // transaction never fails half-way for another writer), PostgreSQL's BEGIN.
  // FailedPrecondition on a read-only connection.
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  virtual Status Rollback() = 0;
  // A transaction is open (Begin without its Commit or Rollback yet).
  virtual bool InTransaction() const = 0;
  virtual bool read_only() const = 0;

  // The schema version the database holds (0: none), and setting it inside the
  // migration's transaction. SQLite keeps it in PRAGMA user_version; PostgreSQL will keep
  // it in a table of its own.
  virtual Result<int> SchemaVersion() = 0;
  virtual Status SetSchemaVersion(int version) = 0;
  // Brings the schema to version migrations.size() (migration N is element N-1), refusing
  // a newer one (FailedPrecondition). The default (schema.cc) is one transaction per
  // version with SetSchemaVersion, enough for a database one process owns (SQLite). A
  // database several replicas share overrides it: two replicas that read version 0 and
  // then both applied migration 1 would fail or apply it twice, so PostgreSQL's backend
  // migrates under the pg layer's advisory lock (controller/pgstore).
  virtual Status Migrate(const std::vector<const char*>& migrations);

 protected:
  Connection() = default;
};

// Commits on Commit(), rolls back when destroyed without it. On a read-only Connection it
// does not begin: begin_status() is FailedPrecondition (every Transaction writes).
class Transaction {
 public:
  explicit Transaction(Connection& db) : db_(db) {
    status_ = db_.read_only() ? FailedPrecondition(kReadOnlyRefusal) : db_.Begin();
  }
  ~Transaction() {
    if (status_.ok() && !done_) (void)db_.Rollback();
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  const Status& begin_status() const { return status_; }
  // A COMMIT that fails (a full disk, an I/O error, a busy database) may leave the
  // transaction open, and every later BEGIN would fail: it is rolled back here, so the
  // store goes on with the next transaction and the caller reports this one's error.
  Status Commit() {
    done_ = true;
    Status committed = db_.Commit();
    if (!committed.ok() && db_.InTransaction()) (void)db_.Rollback();
    return committed;
  }

 private:
  Connection& db_;
  Status status_;
  bool done_ = false;
};

}  // namespace gpufed::store
