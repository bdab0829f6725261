#include "controller/pg/migrations.h"

#include "controller/pg/transaction.h"

namespace gpufed::pg {
namespace {

// pg_advisory_xact_lock's key: one lock for every component's migrations, held until the
// migration transaction ends. Any constant works; this one is "gpufed" in ASCII.
constexpr int64_t kMigrationLockKey = 0x677075666564;

constexpr std::string_view kCreateSchemaTable =
    "CREATE TABLE IF NOT EXISTS gpufed_schema ("
    " component text NOT NULL,"
    " version integer NOT NULL CHECK (version > 0),"
    " description text NOT NULL,"
    " applied_at timestamptz NOT NULL DEFAULT clock_timestamp(),"
    " PRIMARY KEY (component, version))";

Result<int> RecordedVersion(Transaction& tx, std::string_view component) {
  auto rows =
      tx.Exec("read the schema version of " + std::string(component),
              "SELECT coalesce(max(version), 0) AS version FROM gpufed_schema WHERE component = $1", {component});
  if (!rows.ok()) return rows.status();
  auto version = rows->Int64(0, "version");
  if (!version.ok()) return version.status();
  return static_cast<int>(*version);
}

}  // namespace

Result<int> SchemaVersion(Connection& connection, std::string_view component) {
  auto exists = connection.Exec("look for gpufed_schema", "SELECT to_regclass('gpufed_schema') IS NOT NULL AS present");
  if (!exists.ok()) return exists.status();
  auto present = exists->Bool(0, "present");
  if (!present.ok()) return present.status();
  if (!*present) return 0;
  auto rows = connection.Exec("read the schema version of " + std::string(component),
                              "SELECT coalesce(max(version), 0) AS version FROM gpufed_schema WHERE component = $1",
                              {component});
  if (!rows.ok()) return rows.status();
  auto version = rows->Int64(0, "version");
  if (!version.ok()) return version.status();
  return static_cast<int>(*version);
}

Status Migrate(Connection& connection, std::string_view component, std::span<const Migration> migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return FailedPrecondition("the migrations of " + std::string(component) + " are not numbered 1.." +
                                std::to_string(migrations.size()) + " in order (a bug in this gpufed)");
    }
  }
  const int known = static_cast<int>(migrations.size());
  auto tx = Transaction::Begin(connection, "migrate the schema of " + std::string(component));
  if (!tx.ok()) return tx.status();
  // Serialises every replica's migrations: the second waits here, then finds the schema
  // current. CREATE TABLE IF NOT EXISTS alone would race between two first starts.
  auto locked = tx->Exec("take the migration lock", "SELECT pg_advisory_xact_lock($1)", {kMigrationLockKey});
  if (!locked.ok()) return locked.status();
  auto created = tx->Exec("create gpufed_schema", kCreateSchemaTable);
  if (!created.ok()) return created.status();
  auto current = RecordedVersion(*tx, component);
  if (!current.ok()) return current.status();
  if (*current > known) {
    return FailedPrecondition("the database's schema for " + std::string(component) + " is version " +
                              std::to_string(*current) + ", newer than this gpufed knows (version " +
                              std::to_string(known) + "): run a gpufed at least as new as the one that migrated it");
  }
  for (int version = *current + 1; version <= known; ++version) {
    const Migration& step = migrations[static_cast<size_t>(version - 1)];
    const std::string label = std::string(component) + " migration " + std::to_string(version);
    auto applied = tx->ExecScript("apply " + label, step.sql);
    if (!applied.ok()) return applied.status();
    auto recorded =
        tx->Exec("record " + label, "INSERT INTO gpufed_schema (component, version, description) VALUES ($1, $2, $3)",
                 {component, version, step.description});
    if (!recorded.ok()) return recorded.status();
  }
  return tx->Commit();
}

}  // namespace gpufed::pg
