#pragma once
// A thin RAII layer over the SQLite C API: a connection, prepared statements with
// typed binds, and errors as Status. Nothing gpufed-specific lives here.
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "controller/common/durability.h"
#include "controller/common/status.h"

namespace gpufed::store {

class Database;

// The error of every write tried through a read-only Database (and Store).
inline constexpr const char* kReadOnlyRefusal = "the store is open read-only: nothing may be written";

// A prepared statement on loan from its Database's cache: destroying it resets it and
// gives it back, so the SQL of a hot path is compiled once per connection, not per call.
// Must not outlive the Database.
class Statement {
 public:
  Statement(Database* owner, sqlite3* db, sqlite3_stmt* stmt, std::string sql)
      : owner_(owner), db_(db), stmt_(stmt), sql_(std::move(sql)) {}
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds are 1-based, in order of the `?` placeholders.
  Statement& Bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& Bind(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  Statement& Bind(int i, int v) { return Bind(i, static_cast<int64_t>(v)); }
  Statement& Bind(int i, double v) {
    sqlite3_bind_double(stmt_, i, v);
    return *this;
  }
  // Result<bool>: true when a row is ready, false when done.
  Result<bool> Step();
  // Runs to completion (for statements without rows).
  Status Run();

  std::string Text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col)) : std::string();
  }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const { return sqlite3_column_double(stmt_, col); }

 private:
  Database* owner_;
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  std::string sql_;
};

class Database {
 public:
  // Opens (creating) `path` in WAL mode. Synced: synchronous=FULL, a committed
  // transaction is durable when Commit returns. Unsynced: synchronous=OFF, committed
  // transactions survive a killed process but not a power loss (common/durability.h).
  // The database and its -wal and -shm files are private (0600): a new one is created so,
  // an existing one that group or others could read is narrowed to 0600; a symlink in
  // their place, or a file owned by another user, is refused (FailedPrecondition).
  static Result<std::unique_ptr<Database>> Open(const std::string& path, Durability durability = Durability::kSynced);
  // Opens an existing `path` for reading only (`gpufed plan --state`): nothing is
  // created, chmod'ed, migrated or written, no pragma that writes is run, and a symlink
  // in its place is refused. How the -wal file decides between SQLite's `immutable=1`
  // and `mode=ro` is explained in sqlite.cc (OpenReadOnly). NotFound when `path` does
  // not exist. Every statement that would write and every Transaction fail with
  // FailedPrecondition.
  static Result<std::unique_ptr<Database>> OpenReadOnly(const std::string& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  Status Exec(const std::string& sql);
  // A cached statement when one for `sql` is idle, else a newly compiled one.
  Result<std::unique_ptr<Statement>> Prepare(const std::string& sql);
  int64_t LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }
  int Changes() const { return sqlite3_changes(db_); }
  // A transaction is open (BEGIN without its COMMIT or ROLLBACK yet).
  bool InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }
  bool read_only() const { return read_only_; }
  // Copies this database, as of one read transaction, into `destination`, a new private
  // database (Database::Open's rules), with SQLite's online backup: a live controller's
  // store is copied consistent without stopping it (`gpufed state backup`).
  Status BackupTo(const std::string& destination);

 private:
  friend class Statement;
  Database(sqlite3* db, bool read_only) : db_(db), read_only_(read_only) {}
  // sqlite3_open_v2 of `name` (a path or a file: URI) with `flags`.
  static Result<std::unique_ptr<Database>> Connect(const std::string& name, int flags, bool read_only);
  // Takes back a statement that is done (reset, bindings cleared); finalizes it when
  // one for the same SQL is already idle or the cache is full.
  void Return(std::string sql, sqlite3_stmt* stmt);

  static constexpr size_t kMaxCachedStatements = 64;
  sqlite3* db_;
  const bool read_only_;
  std::unordered_map<std::string, sqlite3_stmt*> idle_;
};

// Commits on Commit(), rolls back when destroyed without it. On a read-only Database it
// does not begin: begin_status() is FailedPrecondition (every Transaction writes).
class Transaction {
 public:
  explicit Transaction(Database& db) : db_(db) {
    status_ = db_.read_only() ? FailedPrecondition(kReadOnlyRefusal) : db_.Exec("BEGIN IMMEDIATE");
  }
  ~Transaction() {
    if (status_.ok() && !done_) (void)db_.Exec("ROLLBACK");
  }
  const Status& begin_status() const { return status_; }
  // A COMMIT that fails (a full disk, an I/O error, a busy database) may leave the
  // transaction open, and every later BEGIN would fail: it is rolled back here, so the
  // store goes on with the next transaction and the caller reports this one's error.
  Status Commit() {
    done_ = true;
    Status committed = db_.Exec("COMMIT");
    if (!committed.ok() && db_.InTransaction()) (void)db_.Exec("ROLLBACK");
    return committed;
  }

 private:
  Database& db_;
  Status status_;
  bool done_ = false;
};

}  // namespace gpufed::store
