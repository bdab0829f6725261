#include "controller/store/sqlite.h"

#include <fcntl.h>

#include "controller/common/secure_file.h"

namespace gpufed::store {
namespace {

Status Error(sqlite3* db, const std::string& what) {
  int code = sqlite3_errcode(db);
  std::string msg = what + ": " + sqlite3_errmsg(db);
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_IOERR || code == SQLITE_FULL) return Unavailable(msg);
  if (code == SQLITE_CONSTRAINT) return {StatusCode::kAlreadyExists, msg};
  if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) return {StatusCode::kDataLoss, msg};
  return Internal(msg);
}

// SQLite creates a database 0644 (less the umask) and gives its -wal, -shm and -journal
// files the database's mode, and the database holds every spec's run.env: so the file is
// created 0600 first (O_EXCL|O_NOFOLLOW) and one an older gpufed left readable by others,
// with its side files, is narrowed to 0600 (common/secure_file.h). The existing files are
// checked by name, not opened: closing a descriptor would drop the fcntl locks SQLite
// holds on them in this process.
Status PrepareDatabaseFiles(const std::string& path) {
  if (path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0) return Status::Ok();
  Result<UniqueFd> created = CreatePrivateFile(path, O_RDWR);
  if (!created.ok() && created.status().code() != StatusCode::kAlreadyExists) return created.status();
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    Result<std::optional<ModeChange>> narrowed = NarrowFileByName(path + suffix);
    if (!narrowed.ok() && narrowed.status().code() != StatusCode::kNotFound) return narrowed.status();
  }
  return Status::Ok();
}

}  // namespace

Statement::~Statement() {
  if (owner_ != nullptr) {
    owner_->Return(std::move(sql_), stmt_);
  } else {
    sqlite3_finalize(stmt_);
  }
}

Result<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return Error(db_, "sqlite step");
}

Status Statement::Run() {
  while (true) {
    Result<bool> r = Step();
    if (!r.ok()) return r.status();
    if (!*r) return Status::Ok();
  }
}

Result<std::unique_ptr<Database>> Database::Open(const std::string& path, Durability durability) {
  GPUFED_RETURN_IF_ERROR(PrepareDatabaseFiles(path));
  sqlite3* db = nullptr;
  // NOFOLLOW: a symlink put in place of the database (or a side file) is refused.
  int rc = sqlite3_open_v2(path.c_str(), &db,
                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW, nullptr);
  if (rc != SQLITE_OK) {
    Status s = Unavailable("open " + path + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return s;
  }
  sqlite3_busy_timeout(db, 5000);
  std::unique_ptr<Database> out(new Database(db));
  GPUFED_RETURN_IF_ERROR(out->Exec("PRAGMA journal_mode=WAL"));
  const bool synced = durability == Durability::kSynced;
  GPUFED_RETURN_IF_ERROR(out->Exec(synced ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF"));
  GPUFED_RETURN_IF_ERROR(out->Exec("PRAGMA foreign_keys=ON"));
  return out;
}

Database::~Database() {
  for (auto& [sql, stmt] : idle_) sqlite3_finalize(stmt);
  sqlite3_close(db_);
}

void Database::Return(std::string sql, sqlite3_stmt* stmt) {
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  if (idle_.size() >= kMaxCachedStatements || !idle_.emplace(std::move(sql), stmt).second) sqlite3_finalize(stmt);
}

Status Database::Exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    Status s = Error(db_, "sqlite");
    return Status(s.code(), msg);
  }
  return Status::Ok();
}

Result<std::unique_ptr<Statement>> Database::Prepare(const std::string& sql) {
  if (auto it = idle_.find(sql); it != idle_.end()) {
    sqlite3_stmt* stmt = it->second;
    idle_.erase(it);
    return std::make_unique<Statement>(this, db_, stmt, sql);
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Error(db_, "prepare");
  }
  return std::make_unique<Statement>(this, db_, stmt, sql);
}

}  // namespace gpufed::store
