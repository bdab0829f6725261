#pragma once
// SQLite's backend of the store's SQL interface (sql.h): a connection with WAL, durability
// modes, private files, a read-only open and a cache of prepared statements, errors as
// Status. What only SQLite has (its pragmas, the online backup) lives here and nowhere else.
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/common/durability.h"
#include "controller/common/status.h"
#include "controller/store/sql.h"

namespace gpufed::store {

class Database;

// A prepared statement on loan from its Database's cache: destroying it resets it and
// gives it back, so the SQL of a hot path is compiled once per connection, not per call.
// Must not outlive the Database.
class SqliteStatement final : public Statement {
 public:
  // `param_index[n]` is SQLite's index of `$n` (sql.h: SQLite numbers named parameters
  // by first appearance); empty when `$n` is index n for every n, as in most statements.
  SqliteStatement(Database* owner, sqlite3* db, sqlite3_stmt* stmt, std::string sql, std::vector<int> param_index)
      : owner_(owner), db_(db), stmt_(stmt), sql_(std::move(sql)), param_index_(std::move(param_index)) {}
  ~SqliteStatement() override;

  // A bind SQLite refuses ($n out of range, a statement stepped and not reset) is kept
  // and fails the next Step: the statement must not run with a value it never took.
  Statement& Bind(int i, const std::string& v) override {
    return Bound(i, sqlite3_bind_text(stmt_, Index(i), v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  Statement& Bind(int i, int64_t v) override { return Bound(i, sqlite3_bind_int64(stmt_, Index(i), v)); }
  using Statement::Bind;
  Statement& Bind(int i, double v) override { return Bound(i, sqlite3_bind_double(stmt_, Index(i), v)); }
  Result<bool> Step() override;
  int64_t RowsChanged() const override { return changes_; }

  std::string Text(int col) const override {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col)) : std::string();
  }
  int64_t Int(int col) const override { return sqlite3_column_int64(stmt_, col); }
  double Real(int col) const override { return sqlite3_column_double(stmt_, col); }

 private:
  Statement& Bound(int i, int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) {
      bind_rc_ = rc;
      bind_param_ = i;
    }
    return *this;
  }
  // `$i` past the mapping has no index: 0, which SQLite refuses as out of range.
  int Index(int i) const {
    if (param_index_.empty()) return i;
    return i > 0 && static_cast<size_t>(i) < param_index_.size() ? param_index_[i] : 0;
  }

  Database* owner_;
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  std::string sql_;
  std::vector<int> param_index_;
  int64_t changes_ = 0;
  int bind_rc_ = SQLITE_OK;  // the first refused bind's result code
  int bind_param_ = 0;       // and its $n
};

class Database final : public Connection {
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
  ~Database() override;

  SqlDialect dialect() const override { return SqlDialect::kSqlite; }
  Status Exec(const std::string& sql) override;
  // A cached statement when one for `sql` is idle, else a newly compiled one. Besides
  // sql.h's refusals, SQLite's own parameter forms (`?`, `?NNN`, `:name`, `@name`, `$name`)
  // are InvalidArgument: only `$n` means the same to PostgreSQL.
  Result<std::unique_ptr<Statement>> Prepare(const std::string& sql) override;
  Status Begin() override { return read_only_ ? FailedPrecondition(kReadOnlyRefusal) : Exec("BEGIN IMMEDIATE"); }
  Status Commit() override { return Exec("COMMIT"); }
  Status Rollback() override { return Exec("ROLLBACK"); }
  bool InTransaction() const override { return sqlite3_get_autocommit(db_) == 0; }
  bool read_only() const override { return read_only_; }
  // PRAGMA user_version: a file that is not a database fails here (DataLoss).
  Result<int> SchemaVersion() override;
  Status SetSchemaVersion(int version) override;
  // Copies this database, as of one read transaction, into `destination`, a new private
  // database (Database::Open's rules), with SQLite's online backup: a live controller's
  // store is copied consistent without stopping it (`gpufed state backup`).
  Status BackupTo(const std::string& destination);

 private:
  friend class SqliteStatement;
  // A compiled statement with its `$n` mapping (SqliteStatement).
  struct Compiled {
    sqlite3_stmt* stmt;
    std::vector<int> param_index;
  };
  Database(sqlite3* db, bool read_only) : db_(db), read_only_(read_only) {}
  // sqlite3_open_v2 of `name` (a path or a file: URI) with `flags`.
  static Result<std::unique_ptr<Database>> Connect(const std::string& name, int flags, bool read_only);
  // Takes back a statement that is done (reset, bindings cleared); finalizes it when
  // one for the same SQL is already idle or the cache is full.
  void Return(std::string sql, Compiled compiled);

  static constexpr size_t kMaxCachedStatements = 64;
  sqlite3* db_;
  const bool read_only_;
  std::unordered_map<std::string, Compiled> idle_;
};

}  // namespace gpufed::store
