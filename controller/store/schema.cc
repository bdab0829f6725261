// The store's schema: each dialect's list of migrations (schema.h).
#include "controller/store/schema.h"

#include <string>

namespace gpufed::store {

const std::vector<const char*>& SchemaMigrations(SqlDialect dialect) {
  switch (dialect) {
    case SqlDialect::kSqlite: return SqliteSchemaMigrations();
    case SqlDialect::kPostgres: return PostgresSchemaMigrations();
  }
  return SqliteSchemaMigrations();
}

}  // namespace gpufed::store

namespace gpufed::store {

// One transaction per version, as every gpufed before the portable Store migrated its
// SQLite file: a step that fails leaves the versions before it applied and recorded.
Status Connection::Migrate(const std::vector<const char*>& migrations) {
  Result<int> version = SchemaVersion();
  if (!version.ok()) return version.status();
  const int latest = static_cast<int>(migrations.size());
  if (*version > latest) {
    return FailedPrecondition("store schema version " + std::to_string(*version) + " is newer than this gpufed (" +
                              std::to_string(latest) + ")");
  }
  for (int v = *version; v < latest; ++v) {
    Transaction tx(*this);
    GPUFED_RETURN_IF_ERROR(tx.begin_status());
    GPUFED_RETURN_IF_ERROR(Exec(migrations[static_cast<size_t>(v)]));
    GPUFED_RETURN_IF_ERROR(SetSchemaVersion(v + 1));
    GPUFED_RETURN_IF_ERROR(tx.Commit());
  }
  return Status::Ok();
}

}  // namespace gpufed::store
