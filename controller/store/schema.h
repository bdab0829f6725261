#pragma once
// The store's schema as an append-only list of migrations per SQL dialect. The versions
// are shared: version N holds the same tables, columns, indexes and totals in every
// dialect, so a store's version means one thing whatever its engine, and a gpufed refuses
// a version newer than its own on either (Store::Open). Each dialect's DDL lives in its
// own file (schema_sqlite.cc, schema_postgres.cc); the statements the Store prepares are
// the same for both (sql.h). Never edit a migration that shipped: add the next version,
// to every dialect at once.
#include <vector>

#include "controller/store/sql.h"

namespace gpufed::store {

// What each version adds (the constants of schema_sqlite.cc say it in full).
enum SchemaVersion : int {
  kSchemaInitial = 1,          // workloads, status_history, decisions, actions, meta
  kSchemaAttemptsAndUsage = 2,  // attempts, tenant_usage
  kSchemaUnfinishedIndex = 3,   // workloads_unfinished (a partial index)
  kSchemaTenantNamespaces = 4,  // workloads keyed by uid, namespaced by tenant
  kSchemaHistory = 5,           // history (the dashboard's samples)
  kSchemaStateTotals = 6,       // state_totals, kept by triggers on workloads
  kSchemaMeteredDays = 7,       // tenant_usage_days, kept by a trigger on attempts
  kSchemaTotalsByWriter = 8,    // state_totals per writing session (writer)
  kSchemaTotalsPerStatement = 9,  // inserted rows counted once per INSERT (PostgreSQL)
  kSchemaTotalsPerUpdate = 10,    // updated rows moved once per UPDATE (PostgreSQL)
  kSchemaDecisionSignature = 11,  // workloads.decision_signature
};
inline constexpr int kLatestSchemaVersion = kSchemaDecisionSignature;

// Migration N of `dialect` is element N-1. A dialect whose list is shorter than
// kLatestSchemaVersion cannot open a store yet (Store::Open says so).
const std::vector<const char*>& SchemaMigrations(SqlDialect dialect);

// Each dialect's list (schema_sqlite.cc, schema_postgres.cc).
const std::vector<const char*>& SqliteSchemaMigrations();
const std::vector<const char*>& PostgresSchemaMigrations();

}  // namespace gpufed::store
