#include "controller/store/sqlite.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "controller/common/secure_file.h"

namespace gpufed::store {
namespace {

Status Error(sqlite3* db, const std::string& what) {
  int code = sqlite3_errcode(db);
  std::string msg = what + ": " + sqlite3_errmsg(db);
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_IOERR || code == SQLITE_FULL)
    return Unavailable(msg);
  if (code == SQLITE_CONSTRAINT) return {StatusCode::kAlreadyExists, msg};
  if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB) return {StatusCode::kDataLoss, msg};
  if (code == SQLITE_READONLY) return FailedPrecondition(msg);
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

// A file: URI for `path` (SQLite reads query parameters only from URIs): '%', '?' and
// '#' would end or escape the path, so they are percent-encoded.
std::string FileUri(const std::string& path, const std::string& query) {
  std::string uri = path.rfind('/', 0) == 0 ? "file://" : "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      static const char* kHex = "0123456789ABCDEF";
      uri += '%';
      uri += kHex[static_cast<unsigned char>(c) >> 4];
      uri += kHex[static_cast<unsigned char>(c) & 0xF];
    } else {
      uri += c;
    }
  }
  return uri + "?" + query;
}

// SQLite's index of each `$n` of `stmt` (sql.h: it numbers named parameters by first
// appearance, not by their digits), empty when `$n` is index n throughout. Any other
// parameter form, or numbers that are not exactly 1..count, is refused: PostgreSQL would
// read it differently or not at all.
Result<std::vector<int>> ParameterIndexes(sqlite3_stmt* stmt) {
  const int count = sqlite3_bind_parameter_count(stmt);
  std::vector<int> index(static_cast<size_t>(count) + 1, 0);
  bool identity = true;
  for (int i = 1; i <= count; ++i) {
    const char* name = sqlite3_bind_parameter_name(stmt, i);
    const std::string shown = name != nullptr ? name : "?";
    int n = 0;
    bool numbered = name != nullptr && name[0] == '$' && name[1] >= '1' && name[1] <= '9';
    for (const char* p = name != nullptr ? name + 1 : ""; numbered && *p != '\0'; ++p) {
      numbered = *p >= '0' && *p <= '9' && n <= count;
      n = n * 10 + (*p - '0');
    }
    if (!numbered || n > count) {
      return InvalidArgument("parameter " + shown + " is not one of $1 to $" + std::to_string(count) +
                             " (controller/store/sql.h)");
    }
    index[static_cast<size_t>(n)] = i;
    identity = identity && n == i;
  }
  if (identity) index.clear();
  return index;
}

}  // namespace

SqliteStatement::~SqliteStatement() {
  if (owner_ != nullptr) {
    owner_->Return(std::move(sql_), {stmt_, std::move(param_index_)});
  } else {
    sqlite3_finalize(stmt_);
  }
}

Result<bool> SqliteStatement::Step() {
  if (bind_rc_ != SQLITE_OK) {
    return Internal("sqlite bind $" + std::to_string(bind_param_) + ": " + sqlite3_errstr(bind_rc_));
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) {
    // sqlite3_changes is the connection's last INSERT, UPDATE or DELETE: a read that
    // completes after one must not report its rows.
    changes_ = sqlite3_stmt_readonly(stmt_) != 0 ? 0 : sqlite3_changes64(db_);
    return false;
  }
  return Error(db_, "sqlite step");
}

Result<std::unique_ptr<Database>> Database::Connect(const std::string& name, int flags, bool read_only) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(name.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status s = Unavailable("open " + name + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
    sqlite3_close(db);
    return s;
  }
  sqlite3_busy_timeout(db, 5000);
  return std::unique_ptr<Database>(new Database(db, read_only));
}

Result<std::unique_ptr<Database>> Database::Open(const std::string& path, Durability durability) {
  GPUFED_RETURN_IF_ERROR(PrepareDatabaseFiles(path));
  // NOFOLLOW: a symlink put in place of the database (or a side file) is refused.
  Result<std::unique_ptr<Database>> out =
      Connect(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW, false);
  if (!out.ok()) return out.status();
  GPUFED_RETURN_IF_ERROR((*out)->Exec("PRAGMA journal_mode=WAL"));
  const bool synced = durability == Durability::kSynced;
  GPUFED_RETURN_IF_ERROR((*out)->Exec(synced ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=OFF"));
  GPUFED_RETURN_IF_ERROR((*out)->Exec("PRAGMA foreign_keys=ON"));
  return out;
}

// Read-only, and nothing in the folder changes. Measured with SQLite 3.40 (Debian 12) on
// a WAL database:
// - `mode=ro` alone on a database whose last connection closed cleanly (no -wal: a
//   stopped controller's folder, or a copy of one) creates an empty -wal and a -shm and
//   leaves them behind; `immutable=1` creates nothing and changes no byte. Without a
//   -wal every committed transaction is in the database file, so nothing is missed.
// - With a -wal (a live controller's folder, one killed without a clean close, or a copy
//   of either) `immutable=1` would ignore it, and with it the transactions committed
//   since the last checkpoint. So `mode=ro`: SQLite reads the -wal through the -shm
//   index. It never writes the database or the -wal, but as any reader it writes read
//   marks into the -shm (and rebuilds it after a crash, or creates it when missing, with
//   the database's mode). That is the shared-memory index of the live writer, not data.
// Between the look and the open a controller may start on a folder without -wal; an
// immutable reader then may read a page it is changing: the preview fails or is off by
// that pass, and the store is not harmed (immutable takes no locks and writes nothing).
Result<std::unique_ptr<Database>> Database::OpenReadOnly(const std::string& path) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFound("no database " + path);
    return Unavailable("stat " + path + ": " + std::strerror(errno));
  }
  if (S_ISLNK(st.st_mode)) return FailedPrecondition(path + " is a symlink; refusing to open it");
  if (!S_ISREG(st.st_mode)) return FailedPrecondition(path + " is not a regular file");
  struct stat wal{};
  const bool has_wal = ::lstat((path + "-wal").c_str(), &wal) == 0;
  const std::string uri = FileUri(path, has_wal ? "mode=ro" : "immutable=1");
  return Connect(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW, true);
}

Database::~Database() {
  for (auto& [sql, compiled] : idle_) sqlite3_finalize(compiled.stmt);
  sqlite3_close(db_);
}

void Database::Return(std::string sql, Compiled compiled) {
  sqlite3_stmt* stmt = compiled.stmt;
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  if (idle_.size() >= kMaxCachedStatements || !idle_.emplace(std::move(sql), std::move(compiled)).second) {
    sqlite3_finalize(stmt);
  }
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
    Compiled compiled = std::move(it->second);
    idle_.erase(it);
    return std::unique_ptr<Statement>(
        std::make_unique<SqliteStatement>(this, db_, compiled.stmt, sql, std::move(compiled.param_index)));
  }
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Error(db_, "prepare");
  }
  // The connection refuses writes too (SQLITE_READONLY); refusing here says why, and a
  // write never starts.
  if (read_only_ && sqlite3_stmt_readonly(stmt) == 0) {
    sqlite3_finalize(stmt);
    return FailedPrecondition(kReadOnlyRefusal);
  }
  Result<std::vector<int>> param_index = ParameterIndexes(stmt);
  if (!param_index.ok()) {
    sqlite3_finalize(stmt);
    return param_index.status();
  }
  return std::unique_ptr<Statement>(
      std::make_unique<SqliteStatement>(this, db_, stmt, sql, std::move(param_index).value()));
}

Result<int> Database::SchemaVersion() {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, "PRAGMA user_version", -1, &stmt, nullptr) != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return Error(db_, "schema version");
  }
  // Finalized before any migration runs (a statement still stepping would make its DROP
  // TABLE fail, locked).
  const int rc = sqlite3_step(stmt);
  Result<int> version = rc == SQLITE_ROW ? Result<int>(sqlite3_column_int(stmt, 0)) : Error(db_, "schema version");
  sqlite3_finalize(stmt);
  return version;
}

Status Database::SetSchemaVersion(int version) { return Exec("PRAGMA user_version = " + std::to_string(version)); }

Status Database::BackupTo(const std::string& destination) {
  Result<std::unique_ptr<Database>> to = Database::Open(destination);
  if (!to.ok()) return to.status();
  sqlite3_backup* backup = sqlite3_backup_init((*to)->db_, "main", db_, "main");
  if (backup == nullptr) return Internal("backup of the store: " + std::string(sqlite3_errmsg((*to)->db_)));
  // All pages in one step: one read transaction, so the copy is one consistent state.
  const int stepped = sqlite3_backup_step(backup, -1);
  const int finished = sqlite3_backup_finish(backup);
  if (stepped != SQLITE_DONE || finished != SQLITE_OK) {
    return Unavailable("backup of the store: " +
                       std::string(sqlite3_errstr(stepped != SQLITE_DONE ? stepped : finished)));
  }
  return Status::Ok();
}

}  // namespace gpufed::store
