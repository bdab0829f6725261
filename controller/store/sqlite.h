#pragma once
// A thin RAII layer over the SQLite C API: a connection, prepared statements with
// typed binds, and errors as Status. Nothing gpufed-specific lives here.
#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "controller/common/status.h"

namespace gpufed::store {

class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  ~Statement() { sqlite3_finalize(stmt_); }
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
  sqlite3* db_;
  sqlite3_stmt* stmt_;
};

class Database {
 public:
  // Opens (creating) `path` in WAL mode with synchronous=FULL: a committed transaction
  // is durable when Commit returns.
  static Result<std::unique_ptr<Database>> Open(const std::string& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  Status Exec(const std::string& sql);
  Result<std::unique_ptr<Statement>> Prepare(const std::string& sql);
  int64_t LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }
  int Changes() const { return sqlite3_changes(db_); }

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_;
};

// Commits on Commit(), rolls back when destroyed without it.
class Transaction {
 public:
  explicit Transaction(Database& db) : db_(db) { status_ = db_.Exec("BEGIN IMMEDIATE"); }
  ~Transaction() {
    if (status_.ok() && !done_) (void)db_.Exec("ROLLBACK");
  }
  const Status& begin_status() const { return status_; }
  Status Commit() {
    done_ = true;
    return db_.Exec("COMMIT");
  }

 private:
  Database& db_;
  Status status_;
  bool done_ = false;
};

}  // namespace gpufed::store
