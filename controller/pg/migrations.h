#pragma once
// Versioned schema migrations for PostgreSQL. Each component that owns tables (controller/ha
// its lease, later the store and the journal) keeps an append-only list of migrations, its
// versions 1, 2, 3, ... in order; a version once released is never edited, only followed.
// Migrate applies what a database lacks in one transaction under an advisory lock (so
// replicas starting together neither race nor apply a step twice) and records each step
// in `gpufed_schema` (component, version, description, applied_at by the database's clock).
// A database whose schema for the component is newer than this binary knows is refused,
// as controller/store refuses a newer SQLite schema: an older replica must not write
// tables whose meaning it does not know.
#include <span>
#include <string_view>

#include "controller/pg/connection.h"

namespace gpufed::pg {

struct Migration {
  int version;                   // 1, 2, 3, ... in list order
  std::string_view description;  // recorded in gpufed_schema
  // One or more statements, run inside the migration's transaction: no BEGIN, COMMIT or
  // anything PostgreSQL refuses in a transaction block (CREATE INDEX CONCURRENTLY).
  std::string_view sql;
};

// The component's recorded version: 0 when none of its migrations ran (or gpufed_schema
// does not exist yet).
Result<int> SchemaVersion(Connection& connection, std::string_view component);

// Brings `component` to the last version of `migrations`. Errors: FailedPrecondition when
// the database is newer (naming both versions) or the list is malformed (versions not
// 1..n in order: a bug); otherwise Connection::Exec's, and then nothing of the failed
// migration is applied.
Status Migrate(Connection& connection, std::string_view component, std::span<const Migration> migrations);

}  // namespace gpufed::pg
