// SQLite's migrations, in order (schema.h; store.h and README.md document the tables).
// They are what every gpufed before the portable Store applied, byte for byte: a store
// any of them made opens and migrates exactly as before (store_sql_test). Only the
// Store's DML is portable (sql.h); this DDL is SQLite's, and PostgreSQL's own list
// (schema_postgres.cc) must give each version the same tables.
#include "controller/store/schema.h"

namespace gpufed::store {
namespace {

// 1: the initial schema.
constexpr const char* kInitialSchema = R"sql(
CREATE TABLE workloads(
  name TEXT PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  tenant TEXT NOT NULL,
  source TEXT NOT NULL,
  spec_text TEXT NOT NULL DEFAULT '',
  submitted_ms INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  attempt INTEGER NOT NULL DEFAULT 1,
  cluster TEXT NOT NULL DEFAULT '',
  binding_json TEXT NOT NULL DEFAULT '{}',
  resume_ms INTEGER NOT NULL DEFAULT 0,
  progress_ms INTEGER NOT NULL DEFAULT 0,
  checkpoint_ms INTEGER NOT NULL DEFAULT 0,
  started_ms INTEGER NOT NULL DEFAULT -1,
  finished_ms INTEGER NOT NULL DEFAULT -1,
  estimate_micros INTEGER NOT NULL DEFAULT 0,
  cost_micros INTEGER NOT NULL DEFAULT 0,
  currency TEXT NOT NULL DEFAULT '',
  gpu_milli INTEGER NOT NULL DEFAULT 0,
  cloud INTEGER NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0);
CREATE INDEX workloads_by_tenant ON workloads(tenant, seq);
CREATE TABLE status_history(
  id INTEGER PRIMARY KEY,
  workload TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  from_state TEXT NOT NULL,
  to_state TEXT NOT NULL,
  reason TEXT NOT NULL,
  at_ms INTEGER NOT NULL);
CREATE INDEX history_by_workload ON status_history(workload, id);
CREATE TABLE decisions(
  seq INTEGER PRIMARY KEY,
  at_ms INTEGER NOT NULL,
  workload TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  revision TEXT NOT NULL,
  outcome TEXT NOT NULL,
  cluster TEXT NOT NULL,
  reason TEXT NOT NULL,
  record_json TEXT NOT NULL);
CREATE INDEX decisions_by_workload ON decisions(workload, seq);
CREATE TABLE actions(
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  workload TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  cluster TEXT NOT NULL,
  state TEXT NOT NULL,
  error TEXT NOT NULL DEFAULT '',
  created_ms INTEGER NOT NULL,
  payload TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY(kind, key));
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
)sql";

// 2: finished attempts and tenant usage (fair share, budgets, reports).
constexpr const char* kAttemptsAndUsage = R"sql(
CREATE TABLE attempts(
  workload TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  tenant TEXT NOT NULL,
  cluster TEXT NOT NULL,
  outcome TEXT NOT NULL,
  gpu_seconds REAL NOT NULL,
  cost_micros INTEGER NOT NULL,
  currency TEXT NOT NULL,
  cloud INTEGER NOT NULL,
  started_ms INTEGER NOT NULL,
  finished_ms INTEGER NOT NULL,
  PRIMARY KEY(workload, attempt));
CREATE TABLE tenant_usage(
  tenant TEXT PRIMARY KEY,
  currency TEXT NOT NULL,
  spent_micros INTEGER NOT NULL,
  cloud_spent_micros INTEGER NOT NULL,
  gpu_seconds REAL NOT NULL);
)sql";

// 3: the unfinished workloads (waiting and active) by submission order, so a pass
// reads them without scanning the finished history. The WHERE clause must match
// kUnfinished for SQLite to use the index.
constexpr const char* kUnfinishedIndex = R"sql(
CREATE INDEX workloads_unfinished ON workloads(seq)
  WHERE state NOT IN ('Succeeded', 'Failed', 'Rejected', 'Cancelled');
)sql";

// 4: workloads are namespaced by tenant. A row is one submission, identified by its
// uid; (tenant, name) names at most one unfinished row, and a finished name may be
// submitted again as a new row (the old one stays). History, attempts and decisions
// follow the uid, so two tenants' (or two runs') rows never merge. Before 4 names were
// unique, so the uid of an old row's name is unambiguous.
constexpr const char* kTenantNamespaces = R"sql(
CREATE TABLE workloads_v4(
  uid TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  tenant TEXT NOT NULL,
  source TEXT NOT NULL,
  spec_text TEXT NOT NULL DEFAULT '',
  submitted_ms INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  attempt INTEGER NOT NULL DEFAULT 1,
  cluster TEXT NOT NULL DEFAULT '',
  binding_json TEXT NOT NULL DEFAULT '{}',
  resume_ms INTEGER NOT NULL DEFAULT 0,
  progress_ms INTEGER NOT NULL DEFAULT 0,
  checkpoint_ms INTEGER NOT NULL DEFAULT 0,
  started_ms INTEGER NOT NULL DEFAULT -1,
  finished_ms INTEGER NOT NULL DEFAULT -1,
  estimate_micros INTEGER NOT NULL DEFAULT 0,
  cost_micros INTEGER NOT NULL DEFAULT 0,
  currency TEXT NOT NULL DEFAULT '',
  gpu_milli INTEGER NOT NULL DEFAULT 0,
  cloud INTEGER NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0);
INSERT INTO workloads_v4 SELECT uid, name, tenant, source, spec_text, submitted_ms, seq, state, reason, attempt,
  cluster, binding_json, resume_ms, progress_ms, checkpoint_ms, started_ms, finished_ms, estimate_micros, cost_micros,
  currency, gpu_milli, cloud, cancel_requested FROM workloads ORDER BY seq;
UPDATE status_history SET workload = COALESCE((SELECT uid FROM workloads w WHERE w.name = status_history.workload), workload);
ALTER TABLE decisions ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN uid TEXT NOT NULL DEFAULT '';
UPDATE decisions SET tenant = COALESCE((SELECT tenant FROM workloads w WHERE w.name = decisions.workload), ''),
  uid = COALESCE((SELECT uid FROM workloads w WHERE w.name = decisions.workload), '');
CREATE INDEX decisions_by_tenant_workload ON decisions(tenant, workload, seq);
CREATE TABLE attempts_v4(
  uid TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  workload TEXT NOT NULL,
  tenant TEXT NOT NULL,
  cluster TEXT NOT NULL,
  outcome TEXT NOT NULL,
  gpu_seconds REAL NOT NULL,
  cost_micros INTEGER NOT NULL,
  currency TEXT NOT NULL,
  cloud INTEGER NOT NULL,
  started_ms INTEGER NOT NULL,
  finished_ms INTEGER NOT NULL,
  PRIMARY KEY(uid, attempt));
INSERT INTO attempts_v4 SELECT COALESCE((SELECT uid FROM workloads w WHERE w.name = a.workload), a.workload),
  attempt, workload, tenant, cluster, outcome, gpu_seconds, cost_micros, currency, cloud, started_ms, finished_ms
  FROM attempts a ORDER BY rowid;
DROP TABLE attempts;
ALTER TABLE attempts_v4 RENAME TO attempts;
DROP TABLE workloads;
ALTER TABLE workloads_v4 RENAME TO workloads;
CREATE INDEX workloads_by_tenant ON workloads(tenant, seq);
CREATE INDEX workloads_by_name ON workloads(tenant, name, seq);
CREATE INDEX workloads_unfinished ON workloads(seq)
  WHERE state NOT IN ('Succeeded', 'Failed', 'Rejected', 'Cancelled');
CREATE UNIQUE INDEX workloads_live_name ON workloads(tenant, name)
  WHERE state NOT IN ('Succeeded', 'Failed', 'Rejected', 'Cancelled');
)sql";

// 5: the dashboard's history: one sample of the fleet (JSON) per at_ms of controller
// time, the last day kept (store_history.cc).
constexpr const char* kHistory = R"sql(
CREATE TABLE history(at_ms INTEGER PRIMARY KEY, sample TEXT NOT NULL);
)sql";

// 6: workloads, cost and GPUs per (tenant, state, currency), kept by triggers in the
// transaction of every write, so /metrics, the dashboard and the history count a
// million finished workloads without reading them (CountByState).
// PostgreSQL's equivalent (schema_postgres.cc): a plpgsql function `state_totals_keep()`
// RETURNS trigger, run by one AFTER INSERT OR UPDATE OR DELETE ON workloads FOR EACH ROW
// trigger: on DELETE, and on an UPDATE whose tenant, state, currency, cost_micros or
// gpu_milli IS DISTINCT FROM the old row's (SQLite's `IS NOT`), it subtracts OLD from
// its (tenant, state, currency) row; on INSERT and on such an UPDATE it adds NEW with
// INSERT ... ON CONFLICT (tenant, state, currency) DO UPDATE, the existing columns
// qualified as state_totals.workloads (unqualified they are ambiguous with EXCLUDED's in
// PostgreSQL); it returns NULL. The initial fill is the same INSERT ... SELECT.
constexpr const char* kStateTotals = R"sql(
CREATE TABLE state_totals(
  tenant TEXT NOT NULL,
  state TEXT NOT NULL,
  currency TEXT NOT NULL,
  workloads INTEGER NOT NULL,
  cost_micros INTEGER NOT NULL,
  gpu_milli INTEGER NOT NULL,
  PRIMARY KEY(tenant, state, currency));
INSERT INTO state_totals SELECT tenant, state, currency, COUNT(*), COALESCE(SUM(cost_micros), 0),
  COALESCE(SUM(gpu_milli), 0) FROM workloads GROUP BY tenant, state, currency;
CREATE TRIGGER state_totals_insert AFTER INSERT ON workloads BEGIN
  INSERT INTO state_totals VALUES(NEW.tenant, NEW.state, NEW.currency, 1, NEW.cost_micros, NEW.gpu_milli)
    ON CONFLICT(tenant, state, currency) DO UPDATE SET workloads = workloads + 1,
      cost_micros = cost_micros + excluded.cost_micros, gpu_milli = gpu_milli + excluded.gpu_milli;
END;
CREATE TRIGGER state_totals_delete AFTER DELETE ON workloads BEGIN
  UPDATE state_totals SET workloads = workloads - 1, cost_micros = cost_micros - OLD.cost_micros,
    gpu_milli = gpu_milli - OLD.gpu_milli
    WHERE tenant = OLD.tenant AND state = OLD.state AND currency = OLD.currency;
END;
CREATE TRIGGER state_totals_update AFTER UPDATE ON workloads
  WHEN OLD.tenant IS NOT NEW.tenant OR OLD.state IS NOT NEW.state OR OLD.currency IS NOT NEW.currency
    OR OLD.cost_micros IS NOT NEW.cost_micros OR OLD.gpu_milli IS NOT NEW.gpu_milli BEGIN
  UPDATE state_totals SET workloads = workloads - 1, cost_micros = cost_micros - OLD.cost_micros,
    gpu_milli = gpu_milli - OLD.gpu_milli
    WHERE tenant = OLD.tenant AND state = OLD.state AND currency = OLD.currency;
  INSERT INTO state_totals VALUES(NEW.tenant, NEW.state, NEW.currency, 1, NEW.cost_micros, NEW.gpu_milli)
    ON CONFLICT(tenant, state, currency) DO UPDATE SET workloads = workloads + 1,
      cost_micros = cost_micros + excluded.cost_micros, gpu_milli = gpu_milli + excluded.gpu_milli;
END;
)sql";

// 7: metered cost per tenant and UTC day of booking (an attempt's finished_ms), kept
// by a trigger in the transaction that books the attempt, so a pass reads this budget
// period's metered spend (a few rows per tenant) without reading the attempts, and a
// period's spend starts afresh when the period does (tenant_usage never resets).
// PostgreSQL's equivalent (schema_postgres.cc): a plpgsql function
// `tenant_usage_days_keep()` RETURNS trigger, run AFTER INSERT ON attempts FOR EACH ROW,
// that adds NEW's cost (and its cloud part) to the day's row with INSERT ... ON CONFLICT
// (tenant, day, currency) DO UPDATE, the existing columns qualified by the table's name.
// The day is the same floor division (both engines truncate BIGINT division toward
// zero, hence the CASE for times before 1970); it returns NULL. An attempt is booked
// once (ON CONFLICT DO NOTHING fires no INSERT trigger in either engine).
constexpr const char* kMeteredDays = R"sql(
CREATE TABLE tenant_usage_days(
  tenant TEXT NOT NULL,
  day INTEGER NOT NULL,
  currency TEXT NOT NULL,
  spent_micros INTEGER NOT NULL,
  cloud_spent_micros INTEGER NOT NULL,
  PRIMARY KEY(tenant, day, currency));
INSERT INTO tenant_usage_days
  SELECT tenant, (finished_ms - (CASE WHEN finished_ms < 0 THEN 86399999 ELSE 0 END)) / 86400000, currency,
    SUM(cost_micros), SUM(CASE WHEN cloud != 0 THEN cost_micros ELSE 0 END)
  FROM attempts GROUP BY 1, 2, 3;
CREATE TRIGGER tenant_usage_days_insert AFTER INSERT ON attempts BEGIN
  INSERT INTO tenant_usage_days VALUES(NEW.tenant,
      (NEW.finished_ms - (CASE WHEN NEW.finished_ms < 0 THEN 86399999 ELSE 0 END)) / 86400000, NEW.currency,
      NEW.cost_micros, CASE WHEN NEW.cloud != 0 THEN NEW.cost_micros ELSE 0 END)
    ON CONFLICT(tenant, day, currency) DO UPDATE SET spent_micros = spent_micros + excluded.spent_micros,
      cloud_spent_micros = cloud_spent_micros + excluded.cloud_spent_micros;
END;
)sql";

// 8: state_totals kept per writing session (`writer`), so that two sessions of one
// leader (PostgreSQL: the loop's and the API submissions', each naming itself in the
// setting gpufed.writer) never wait for each other's totals rows, nor deadlock on them. A
// row leaving a state is added as -1 to its writer's row (which may go below zero); the
// totals are the sums over the writers (CountByState). SQLite has one connection, so
// its writer is always ''. The table is rebuilt (SQLite cannot change a primary key),
// its rows kept as writer ''.
// PostgreSQL's equivalent (schema_postgres.cc): the column added with DEFAULT '', the
// primary key replaced by (tenant, state, currency, writer), and `state_totals_keep()`
// replaced by one that upserts -OLD and +NEW into the rows of
// COALESCE(current_setting('gpufed.writer', true), '').
constexpr const char* kTotalsByWriter = R"sql(
CREATE TABLE state_totals_by_writer(
  tenant TEXT NOT NULL,
  state TEXT NOT NULL,
  currency TEXT NOT NULL,
  workloads INTEGER NOT NULL,
  cost_micros INTEGER NOT NULL,
  gpu_milli INTEGER NOT NULL,
  writer TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(tenant, state, currency, writer));
INSERT INTO state_totals_by_writer SELECT tenant, state, currency, workloads, cost_micros, gpu_milli, ''
  FROM state_totals;
DROP TRIGGER state_totals_insert;
DROP TRIGGER state_totals_delete;
DROP TRIGGER state_totals_update;
DROP TABLE state_totals;
ALTER TABLE state_totals_by_writer RENAME TO state_totals;
CREATE TRIGGER state_totals_insert AFTER INSERT ON workloads BEGIN
  INSERT INTO state_totals VALUES(NEW.tenant, NEW.state, NEW.currency, 1, NEW.cost_micros, NEW.gpu_milli, '')
    ON CONFLICT(tenant, state, currency, writer) DO UPDATE SET workloads = workloads + excluded.workloads,
      cost_micros = cost_micros + excluded.cost_micros, gpu_milli = gpu_milli + excluded.gpu_milli;
END;
CREATE TRIGGER state_totals_delete AFTER DELETE ON workloads BEGIN
  INSERT INTO state_totals VALUES(OLD.tenant, OLD.state, OLD.currency, -1, -OLD.cost_micros, -OLD.gpu_milli, '')
    ON CONFLICT(tenant, state, currency, writer) DO UPDATE SET workloads = workloads + excluded.workloads,
      cost_micros = cost_micros + excluded.cost_micros, gpu_milli = gpu_milli + excluded.gpu_milli;
END;
CREATE TRIGGER state_totals_update AFTER UPDATE ON workloads
  WHEN OLD.tenant IS NOT NEW.tenant OR OLD.state IS NOT NEW.state OR OLD.currency IS NOT NEW.currency
    OR OLD.cost_micros IS NOT NEW.cost_micros OR OLD.gpu_milli IS NOT NEW.gpu_milli BEGIN
  INSERT INTO state_totals VALUES(OLD.tenant, OLD.state, OLD.currency, -1, -OLD.cost_micros, -OLD.gpu_milli, '')
    ON CONFLICT(tenant, state, currency, writer) DO UPDATE SET workloads = workloads + excluded.workloads,
      cost_micros = cost_micros + excluded.cost_micros, gpu_milli = gpu_milli + excluded.gpu_milli;
  INSERT INTO state_totals VALUES(NEW.tenant, NEW.state, NEW.currency, 1, NEW.cost_micros, NEW.gpu_milli, '')
    ON CONFLICT(tenant, state, currency, writer) DO UPDATE SET workloads = workloads + excluded.workloads,
      cost_micros = cost_micros + excluded.cost_micros, gpu_milli = gpu_milli + excluded.gpu_milli;
END;
)sql";

// 9: nothing changes. PostgreSQL counts an INSERT's rows once per statement
// (schema_postgres.cc); SQLite's triggers run per row only, and each is a few
// instructions in the engine's own VM, not a PL/pgSQL call.
constexpr const char* kTotalsPerStatement = R"sql(
SELECT 1;
)sql";

// 10: nothing changes. PostgreSQL moves an UPDATE's rows between totals once per
// statement (schema_postgres.cc); SQLite's triggers stay per row, as for migration 9.
constexpr const char* kTotalsPerUpdate = R"sql(
SELECT 1;
)sql";

// 11: workloads.decision_signature, what the loop last journalled of a workload it did
// not place (records.h): a new leader compares its first pass's decisions with it instead
// of journalling every queued workload again (bench/README.md, "A new term's first pass").
constexpr const char* kDecisionSignature = R"sql(
ALTER TABLE workloads ADD COLUMN decision_signature TEXT NOT NULL DEFAULT '';
)sql";

}  // namespace

const std::vector<const char*>& SqliteSchemaMigrations() {
  // Migration N is element N-1 (schema.h's SchemaVersion); each constant above says what
  // it adds.
  static const std::vector<const char*> kMigrations = {
      kInitialSchema, kAttemptsAndUsage, kUnfinishedIndex,    kTenantNamespaces, kHistory,          kStateTotals,
      kMeteredDays,   kTotalsByWriter,   kTotalsPerStatement, kTotalsPerUpdate,  kDecisionSignature};
  return kMigrations;
}

}  // namespace gpufed::store
