// The store's schema: each dialect's list of migrations (schema.h).
#include "controller/store/schema.h"

namespace gpufed::store {

const std::vector<const char*>& SchemaMigrations(SqlDialect dialect) {
  switch (dialect) {
    case SqlDialect::kSqlite: return SqliteSchemaMigrations();
    case SqlDialect::kPostgres: return PostgresSchemaMigrations();
  }
  return SqliteSchemaMigrations();
}

}  // namespace gpufed::store
