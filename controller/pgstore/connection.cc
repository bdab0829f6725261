#include "controller/pgstore/connection.h"

#include <cctype>

#include "controller/pg/migrations.h"
#include "controller/pgstore/fenced_statement.h"
#include "controller/pgstore/statement.h"

namespace gpufed::pgstore {
namespace {

// What a read-only connection prepares: a statement that starts with SELECT or WITH
// (sql.h's Prepare refusal). The session's default_transaction_read_only is the engine's
// own check behind it (a WITH that writes, a function that writes).
bool Reads(const std::string& sql) {
  size_t i = 0;
  while (i < sql.size() && std::isspace(static_cast<unsigned char>(sql[i])) != 0) ++i;
  std::string word;
  while (i < sql.size() && std::isalpha(static_cast<unsigned char>(sql[i])) != 0) {
    word += static_cast<char>(std::toupper(static_cast<unsigned char>(sql[i++])));
  }
  return word == "SELECT" || word == "WITH";
}

// A savepoint command (SAVEPOINT x, RELEASE [SAVEPOINT] x, ROLLBACK TO [SAVEPOINT] x):
// the Store sends them around each submission of a group and needs none of their replies
// before its next statement, so inside a transaction they ride with it (pg::Connection::Defer).
bool IsSavepointCommand(const std::string& sql) {
  if (sql.find(';') != std::string::npos) return false;
  auto starts = [&](std::string_view prefix) {
    if (sql.size() < prefix.size()) return false;
    for (size_t i = 0; i < prefix.size(); ++i) {
      if (std::toupper(static_cast<unsigned char>(sql[i])) != prefix[i]) return false;
    }
    return true;
  };
  return starts("SAVEPOINT ") || starts("RELEASE ") || starts("ROLLBACK TO ");
}

}  // namespace

Result<std::unique_ptr<PgConnection>> PgConnection::Open(const pg::ConnectionPolicy& policy,
                                                         const OpenOptions& options) {
  Result<std::unique_ptr<pg::Connection>> connection = pg::Connection::Open(policy, options.connect);
  if (!connection.ok()) return connection.status();
  return Adopt(std::move(connection).value(), options.read_only, options.writer);
}

Result<std::unique_ptr<PgConnection>> PgConnection::Adopt(std::unique_ptr<pg::Connection> connection, bool read_only,
                                                          const std::string& writer) {
  // The Store's text is UTF-8 (checked before it is sent, statement.h); the session must
  // read it so whatever the server's default. A read-only store's session refuses writes
  // in the engine too. The writer names the session's state_totals rows (migration 8).
  Result<pg::Rows> set = connection->Exec(
      "set the store session's encoding, access and writer",
      "SELECT set_config('client_encoding', 'UTF8', false), set_config('default_transaction_read_only', $1, false), "
      "set_config('gpufed.writer', $2, false)",
      {read_only ? "on" : "off", writer});
  if (!set.ok()) return set.status();
  return std::unique_ptr<PgConnection>(new PgConnection(std::move(connection), read_only));
}

Result<std::unique_ptr<PgConnection>> PgConnection::Within(pg::Transaction& outer, const std::string& writer) {
  if (writer.empty() || writer.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos) {
    return InvalidArgument("a store writer's name is [a-z]+, not '" + writer + "'");
  }
  // Rides with the first write (pg::Connection::Defer); checked above, so the literal is safe.
  outer.connection().Defer("name the store's writer", "SET LOCAL gpufed.writer = '" + writer + "'");
  return std::unique_ptr<PgConnection>(new PgConnection(outer));
}

Status PgConnection::Exec(const std::string& sql) {
  if (read_only_) return FailedPrecondition(store::kReadOnlyRefusal);
  if (InTransaction() && IsSavepointCommand(sql)) {
    // Its error, if any, fails the next statement, which then does not run; the COMMIT
    // cannot succeed after it (pg::Transaction::Commit), so a failed savepoint command is
    // never acknowledged as a commit.
    connection_->Defer(StatementPurpose(sql), sql);
    return Status::Ok();
  }
  const bool own_transaction = guard_ && !InTransaction();
  if (own_transaction) GPUFED_RETURN_IF_ERROR(Begin());
  Result<pg::Rows> done = connection_->ExecScript(StatementPurpose(sql), sql);
  if (!own_transaction) return done.ok() ? Status::Ok() : done.status();
  if (!done.ok()) {
    (void)Rollback();
    return done.status();
  }
  return Commit();
}

Result<std::unique_ptr<store::Statement>> PgConnection::Prepare(const std::string& sql) {
  return PrepareWith(sql, store::RowLookup::kPlanned);
}

Result<std::unique_ptr<store::Statement>> PgConnection::PrepareByKey(const std::string& sql) {
  return PrepareWith(sql, store::RowLookup::kByKey);
}

Result<std::unique_ptr<store::Statement>> PgConnection::PrepareWith(const std::string& sql, store::RowLookup lookup) {
  if (read_only_ && !Reads(sql)) return FailedPrecondition(store::kReadOnlyRefusal);
  // Nothing is sent yet: the statement is parsed and run by its first Step (libpq's
  // unnamed statement), so a Prepare costs no round trip.
  auto statement = std::make_unique<PgStatement>(*connection_, *this, sql, read_only_, lookup);
  if (guard_ && !Reads(sql)) return std::unique_ptr<store::Statement>(new FencedStatement(std::move(statement), *this));
  return std::unique_ptr<store::Statement>(std::move(statement));
}

Status PgConnection::Begin() {
  if (read_only_) return FailedPrecondition(store::kReadOnlyRefusal);
  if (InTransaction()) return FailedPrecondition("begin a store transaction: one is already open");
  // BEGIN goes with the transaction's first statement (one round trip for both): a
  // submission group's is its first INSERT, a fenced transaction's the fence's check.
  tx_.emplace(pg::Transaction::BeginDeferred(*connection_, "store transaction"));
  if (guard_) {
    if (Status guarded = guard_(*tx_); !guarded.ok()) {
      (void)tx_->Rollback();
      tx_.reset();
      return guarded;
    }
  }
  return Status::Ok();
}

Status PgConnection::Commit() {
  if (outer_ != nullptr) return FailedPrecondition("commit a store transaction: the transaction is its owner's to end");
  if (!tx_) return FailedPrecondition("commit a store transaction: none is open");
  // Over whatever COMMIT answered (pg::Transaction::Commit): Aborted when a statement had
  // failed, Unavailable with the outcome unknown when the connection broke.
  Status committed = tx_->Commit();
  tx_.reset();
  return committed;
}

Status PgConnection::Rollback() {
  if (outer_ != nullptr) {
    return FailedPrecondition("roll back a store transaction: the transaction is its owner's to end");
  }
  if (!tx_) return FailedPrecondition("roll back a store transaction: none is open");
  Status rolled_back = tx_->Rollback();
  tx_.reset();
  return rolled_back;
}

Result<int> PgConnection::SchemaVersion() { return pg::SchemaVersion(*connection_, kStoreComponent); }

Status PgConnection::SetSchemaVersion(int version) {
  return FailedPrecondition("the PostgreSQL store records schema version " + std::to_string(version) +
                            " with its migration (PgConnection::Migrate), not on its own");
}

Status PgConnection::Migrate(const std::vector<const char*>& migrations) {
  if (read_only_) return FailedPrecondition(store::kReadOnlyRefusal);
  if (outer_ != nullptr)
    return FailedPrecondition("the store is migrated on a session of its own, not inside another's transaction");
  std::vector<std::string> descriptions;
  std::vector<pg::Migration> steps;
  descriptions.reserve(migrations.size());
  steps.reserve(migrations.size());
  for (size_t i = 0; i < migrations.size(); ++i) {
    descriptions.push_back("store schema version " + std::to_string(i + 1) + " (controller/store/schema.h)");
  }
  for (size_t i = 0; i < migrations.size(); ++i) {
    steps.push_back(pg::Migration{static_cast<int>(i) + 1, descriptions[i], migrations[i]});
  }
  return pg::Migrate(*connection_, kStoreComponent, steps);
}

}  // namespace gpufed::pgstore
