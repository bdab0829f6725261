#pragma once
// PostgreSQL's backend of the store's SQL interface (controller/store/sql.h) over one
// pg::Connection: the Store's portable statements run as they are (`$n` binds sent in
// text form), transactions are the pg layer's, and the schema is migrated under the pg
// layer's advisory lock and recorded in its gpufed_schema table (component `store`), so
// replicas that start together on one database migrate it once.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/common/status.h"
#include "controller/pg/connection.h"
#include "controller/pg/connection_policy.h"
#include "controller/pg/transaction.h"
#include "controller/store/sql.h"

namespace gpufed::pgstore {

// The component the store's migrations are recorded under in gpufed_schema.
inline constexpr const char* kStoreComponent = "store";

struct OpenOptions {
  // Reads only (`gpufed plan --state` on a shared store): the session is
  // default_transaction_read_only, and every write through it fails with
  // FailedPrecondition (store::kReadOnlyRefusal) before it reaches the server.
  bool read_only = false;
  // The session's name in the setting gpufed.writer, which the store's state_totals
  // triggers count its writes under (schema_postgres.cc, migration 8): sessions that write
  // at once under different names never wait for each other's totals rows. The leader's
  // loop and its API submissions write through two sessions (store::Store::OpenOn).
  std::string writer;
  pg::ConnectOptions connect;
};

class PgConnection final : public store::Connection {
 public:
  // Connects as `policy` says (the pg layer's rules: passfile, verify-full off the socket).
  static Result<std::unique_ptr<PgConnection>> Open(const pg::ConnectionPolicy& policy,
                                                    const OpenOptions& options = {});
  // Wraps an open connection (tests, and callers that connected already); `writer` as
  // OpenOptions::writer.
  static Result<std::unique_ptr<PgConnection>> Adopt(std::unique_ptr<pg::Connection> connection, bool read_only,
                                                     const std::string& writer = "");
  // The store's writes inside a transaction someone else opened and will commit (the
  // audit journal's: a submission group's rows commit with its records, store_submit.cc),
  // counted in state_totals under `writer` ([a-z]+; SET LOCAL: the setting ends with the
  // transaction). Borrows `outer`, which must outlive it. Begin, Commit and Rollback are
  // refused (the outer transaction's owner ends it; a savepoint is the way to undo part of
  // it); no guard runs (the owner fenced the transaction when it began it).
  static Result<std::unique_ptr<PgConnection>> Within(pg::Transaction& outer, const std::string& writer);

  store::SqlDialect dialect() const override { return store::SqlDialect::kPostgres; }
  Status Exec(const std::string& sql) override;
  Result<std::unique_ptr<store::Statement>> Prepare(const std::string& sql) override;
  // Planned by key inside a transaction (statement.h's kPlanByKey).
  Result<std::unique_ptr<store::Statement>> PrepareByKey(const std::string& sql) override;
  Status Begin() override;
  Status Commit() override;
  Status Rollback() override;
  bool InTransaction() const override { return tx_.has_value() || outer_ != nullptr; }
  bool read_only() const override { return read_only_; }
  // gpufed_schema's version for kStoreComponent (0: none).
  Result<int> SchemaVersion() override;
  // Versions are recorded by Migrate only (with the migration, under its lock).
  Status SetSchemaVersion(int version) override;
  // Every missing version in one transaction under pg::Migrate's advisory lock; a newer
  // database is refused (FailedPrecondition naming both versions).
  Status Migrate(const std::vector<const char*>& migrations) override;

  pg::Connection& connection() { return *connection_; }

  // Run inside every write transaction right after its BEGIN, before any of its
  // statements: the leader's fence (controller/ha's CheckFence with its term's token,
  // wired by the runtime; this module knows nothing of leases). A guard that fails rolls
  // the transaction back and fails Begin, so nothing of it is written. Writes the Store
  // runs outside a transaction get a transaction of their own with the guard
  // (fenced_statement.h), and so does Exec. Set once, before the Store uses the connection.
  using WriteGuard = std::function<Status(pg::Transaction&)>;
  void SetWriteGuard(WriteGuard guard) { guard_ = std::move(guard); }

 private:
  Result<std::unique_ptr<store::Statement>> PrepareWith(const std::string& sql, store::RowLookup lookup);

  PgConnection(std::unique_ptr<pg::Connection> connection, bool read_only)
      : owned_(std::move(connection)), connection_(owned_.get()), read_only_(read_only) {}
  explicit PgConnection(pg::Transaction& outer) : connection_(&outer.connection()), read_only_(false), outer_(&outer) {}

  std::unique_ptr<pg::Connection> owned_;  // null for Within's, which borrows
  pg::Connection* connection_;
  const bool read_only_;
  std::optional<pg::Transaction> tx_;
  pg::Transaction* const outer_ = nullptr;  // Within's: the transaction it writes in
  WriteGuard guard_;
};

}  // namespace gpufed::pgstore
