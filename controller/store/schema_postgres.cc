// PostgreSQL 15's migrations (issue 38; the backend is controller/pgstore), version for
// version with schema_sqlite.cc (schema.h): the same tables, columns and indexes, with
// PostgreSQL's types. BIGINT where SQLite says INTEGER (every *_ms, *_micros, seq,
// gpu_milli, attempt, count: SQLite's INTEGER is 64 bits, PostgreSQL's 32), DOUBLE
// PRECISION where SQLite says REAL (PostgreSQL's REAL is 4 bytes), TEXT for TEXT, INTEGER
// 0/1 for the flags (the Store binds and reads them as integers). `status_history.id` and
// `decisions.seq` are identity columns (SQLite's INTEGER PRIMARY KEY is its rowid), and
// `attempts` and `actions`, which the Store orders by insertion, get a `rowid` identity
// column of their own (README.md, "Portable SQL"). The totals' triggers are plpgsql
// functions that do what schema_sqlite.cc says beside each SQLite trigger, in the same
// transaction as the write. The version lives in the pg layer's gpufed_schema table
// (component `store`), written by controller/pgstore under its advisory lock.
//
// No data migrations: a PostgreSQL store starts empty and migrates 0 to 7 in one go, so
// version 4 replaces the tables it reshapes instead of copying rows (SQLite's copies every
// row); the store at version N still holds what SQLite's does at N.
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
  submitted_ms BIGINT NOT NULL,
  seq BIGINT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  attempt BIGINT NOT NULL DEFAULT 1,
  cluster TEXT NOT NULL DEFAULT '',
  binding_json TEXT NOT NULL DEFAULT '{}',
  resume_ms BIGINT NOT NULL DEFAULT 0,
  progress_ms BIGINT NOT NULL DEFAULT 0,
  checkpoint_ms BIGINT NOT NULL DEFAULT 0,
  started_ms BIGINT NOT NULL DEFAULT -1,
  finished_ms BIGINT NOT NULL DEFAULT -1,
  estimate_micros BIGINT NOT NULL DEFAULT 0,
  cost_micros BIGINT NOT NULL DEFAULT 0,
  currency TEXT NOT NULL DEFAULT '',
  gpu_milli BIGINT NOT NULL DEFAULT 0,
  cloud INTEGER NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0);
CREATE INDEX workloads_by_tenant ON workloads(tenant, seq);
CREATE TABLE status_history(
  id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  workload TEXT NOT NULL,
  attempt BIGINT NOT NULL,
  from_state TEXT NOT NULL,
  to_state TEXT NOT NULL,
  reason TEXT NOT NULL,
  at_ms BIGINT NOT NULL);
CREATE INDEX history_by_workload ON status_history(workload, id);
CREATE TABLE decisions(
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at_ms BIGINT NOT NULL,
  workload TEXT NOT NULL,
  attempt BIGINT NOT NULL,
  revision TEXT NOT NULL,
  outcome TEXT NOT NULL,
  cluster TEXT NOT NULL,
  reason TEXT NOT NULL,
  record_json TEXT NOT NULL);
CREATE INDEX decisions_by_workload ON decisions(workload, seq);
CREATE TABLE actions(
  rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  kind TEXT NOT NULL,
  key TEXT NOT NULL,
  workload TEXT NOT NULL,
  attempt BIGINT NOT NULL,
  cluster TEXT NOT NULL,
  state TEXT NOT NULL,
  error TEXT NOT NULL DEFAULT '',
  created_ms BIGINT NOT NULL,
  payload TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY(kind, key));
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
)sql";

// 2: finished attempts and tenant usage (fair share, budgets, reports).
constexpr const char* kAttemptsAndUsage = R"sql(
CREATE TABLE attempts(
  rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  workload TEXT NOT NULL,
  attempt BIGINT NOT NULL,
  tenant TEXT NOT NULL,
  cluster TEXT NOT NULL,
  outcome TEXT NOT NULL,
  gpu_seconds DOUBLE PRECISION NOT NULL,
  cost_micros BIGINT NOT NULL,
  currency TEXT NOT NULL,
  cloud INTEGER NOT NULL,
  started_ms BIGINT NOT NULL,
  finished_ms BIGINT NOT NULL,
  PRIMARY KEY(workload, attempt));
CREATE TABLE tenant_usage(
  tenant TEXT PRIMARY KEY,
  currency TEXT NOT NULL,
  spent_micros BIGINT NOT NULL,
  cloud_spent_micros BIGINT NOT NULL,
  gpu_seconds DOUBLE PRECISION NOT NULL);
)sql";

// 3: the unfinished workloads by submission order (a partial index, as SQLite's).
constexpr const char* kUnfinishedIndex = R"sql(
CREATE INDEX workloads_unfinished ON workloads(seq)
  WHERE state NOT IN ('Succeeded', 'Failed', 'Rejected', 'Cancelled');
)sql";

// 4: workloads keyed by uid and namespaced by tenant (schema_sqlite.cc says why). The
// tables it reshapes are empty here (no data migrations, see the top), so they are
// replaced rather than copied.
constexpr const char* kTenantNamespaces = R"sql(
DROP TABLE workloads;
CREATE TABLE workloads(
  uid TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  tenant TEXT NOT NULL,
  source TEXT NOT NULL,
  spec_text TEXT NOT NULL DEFAULT '',
  submitted_ms BIGINT NOT NULL,
  seq BIGINT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  attempt BIGINT NOT NULL DEFAULT 1,
  cluster TEXT NOT NULL DEFAULT '',
  binding_json TEXT NOT NULL DEFAULT '{}',
  resume_ms BIGINT NOT NULL DEFAULT 0,
  progress_ms BIGINT NOT NULL DEFAULT 0,
  checkpoint_ms BIGINT NOT NULL DEFAULT 0,
  started_ms BIGINT NOT NULL DEFAULT -1,
  finished_ms BIGINT NOT NULL DEFAULT -1,
  estimate_micros BIGINT NOT NULL DEFAULT 0,
  cost_micros BIGINT NOT NULL DEFAULT 0,
  currency TEXT NOT NULL DEFAULT '',
  gpu_milli BIGINT NOT NULL DEFAULT 0,
  cloud INTEGER NOT NULL DEFAULT 0,
  cancel_requested INTEGER NOT NULL DEFAULT 0);
ALTER TABLE decisions ADD COLUMN tenant TEXT NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN uid TEXT NOT NULL DEFAULT '';
CREATE INDEX decisions_by_tenant_workload ON decisions(tenant, workload, seq);
DROP TABLE attempts;
CREATE TABLE attempts(
  rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
  uid TEXT NOT NULL,
  attempt BIGINT NOT NULL,
  workload TEXT NOT NULL,
  tenant TEXT NOT NULL,
  cluster TEXT NOT NULL,
  outcome TEXT NOT NULL,
  gpu_seconds DOUBLE PRECISION NOT NULL,
  cost_micros BIGINT NOT NULL,
  currency TEXT NOT NULL,
  cloud INTEGER NOT NULL,
  started_ms BIGINT NOT NULL,
  finished_ms BIGINT NOT NULL,
  PRIMARY KEY(uid, attempt));
CREATE INDEX workloads_by_tenant ON workloads(tenant, seq);
CREATE INDEX workloads_by_name ON workloads(tenant, name, seq);
CREATE INDEX workloads_unfinished ON workloads(seq)
  WHERE state NOT IN ('Succeeded', 'Failed', 'Rejected', 'Cancelled');
CREATE UNIQUE INDEX workloads_live_name ON workloads(tenant, name)
  WHERE state NOT IN ('Succeeded', 'Failed', 'Rejected', 'Cancelled');
)sql";

// 5: the dashboard's history (store_history.cc).
constexpr const char* kHistory = R"sql(
CREATE TABLE history(at_ms BIGINT PRIMARY KEY, sample TEXT NOT NULL);
)sql";

// 6: workloads, cost and GPUs per (tenant, state, currency), kept in the transaction of
// every write to workloads. One function for the three SQLite triggers: an UPDATE that
// changes none of the five columns (NULL-safe: IS DISTINCT FROM, SQLite's IS NOT) leaves
// the totals alone; otherwise OLD leaves its row and NEW joins its own. The stored
// columns are qualified by the table's name in DO UPDATE (bare, PostgreSQL finds them
// ambiguous with EXCLUDED's).
constexpr const char* kStateTotals = R"sql(
CREATE TABLE state_totals(
  tenant TEXT NOT NULL,
  state TEXT NOT NULL,
  currency TEXT NOT NULL,
  workloads BIGINT NOT NULL,
  cost_micros BIGINT NOT NULL,
  gpu_milli BIGINT NOT NULL,
  PRIMARY KEY(tenant, state, currency));
INSERT INTO state_totals SELECT tenant, state, currency, COUNT(*), COALESCE(SUM(cost_micros), 0),
  COALESCE(SUM(gpu_milli), 0) FROM workloads GROUP BY tenant, state, currency;
CREATE FUNCTION state_totals_keep() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF TG_OP = 'UPDATE' AND NOT (OLD.tenant IS DISTINCT FROM NEW.tenant OR OLD.state IS DISTINCT FROM NEW.state
      OR OLD.currency IS DISTINCT FROM NEW.currency OR OLD.cost_micros IS DISTINCT FROM NEW.cost_micros
      OR OLD.gpu_milli IS DISTINCT FROM NEW.gpu_milli) THEN
    RETURN NULL;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE state_totals SET workloads = state_totals.workloads - 1,
        cost_micros = state_totals.cost_micros - OLD.cost_micros, gpu_milli = state_totals.gpu_milli - OLD.gpu_milli
      WHERE state_totals.tenant = OLD.tenant AND state_totals.state = OLD.state
        AND state_totals.currency = OLD.currency;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO state_totals VALUES(NEW.tenant, NEW.state, NEW.currency, 1, NEW.cost_micros, NEW.gpu_milli)
      ON CONFLICT(tenant, state, currency) DO UPDATE SET workloads = state_totals.workloads + 1,
        cost_micros = state_totals.cost_micros + excluded.cost_micros,
        gpu_milli = state_totals.gpu_milli + excluded.gpu_milli;
  END IF;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER state_totals_keep AFTER INSERT OR UPDATE OR DELETE ON workloads
  FOR EACH ROW EXECUTE FUNCTION state_totals_keep();
)sql";

// 7: metered cost per tenant, UTC day of booking and currency, kept by a trigger in the
// transaction that books the attempt. The day is SQLite's floor division (BIGINT division
// truncates toward zero in both engines, hence the CASE before 1970). An attempt is
// booked once: ON CONFLICT DO NOTHING fires no INSERT trigger.
constexpr const char* kMeteredDays = R"sql(
CREATE TABLE tenant_usage_days(
  tenant TEXT NOT NULL,
  day BIGINT NOT NULL,
  currency TEXT NOT NULL,
  spent_micros BIGINT NOT NULL,
  cloud_spent_micros BIGINT NOT NULL,
  PRIMARY KEY(tenant, day, currency));
INSERT INTO tenant_usage_days
  SELECT tenant, (finished_ms - (CASE WHEN finished_ms < 0 THEN 86399999 ELSE 0 END)) / 86400000, currency,
    SUM(cost_micros), SUM(CASE WHEN cloud != 0 THEN cost_micros ELSE 0 END)
  FROM attempts GROUP BY 1, 2, 3;
CREATE FUNCTION tenant_usage_days_keep() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO tenant_usage_days VALUES(NEW.tenant,
      (NEW.finished_ms - (CASE WHEN NEW.finished_ms < 0 THEN 86399999 ELSE 0 END)) / 86400000, NEW.currency,
      NEW.cost_micros, CASE WHEN NEW.cloud != 0 THEN NEW.cost_micros ELSE 0 END)
    ON CONFLICT(tenant, day, currency) DO UPDATE SET
      spent_micros = tenant_usage_days.spent_micros + excluded.spent_micros,
      cloud_spent_micros = tenant_usage_days.cloud_spent_micros + excluded.cloud_spent_micros;
  RETURN NULL;
END
$fn$;
CREATE TRIGGER tenant_usage_days_keep AFTER INSERT ON attempts
  FOR EACH ROW EXECUTE FUNCTION tenant_usage_days_keep();
)sql";

// 8: state_totals per writing session (schema_sqlite.cc says why). Each session names
// itself in the setting gpufed.writer (pgstore::OpenOptions::writer); a session that
// does not writes the rows of ''. A row leaving a state is upserted as -1 into its
// writer's row, since the row it was counted in may be another writer's.
constexpr const char* kTotalsByWriter = R"sql(
ALTER TABLE state_totals ADD COLUMN writer TEXT NOT NULL DEFAULT '';
ALTER TABLE state_totals DROP CONSTRAINT state_totals_pkey;
ALTER TABLE state_totals ADD PRIMARY KEY(tenant, state, currency, writer);
CREATE OR REPLACE FUNCTION state_totals_keep() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  w TEXT := COALESCE(current_setting('gpufed.writer', true), '');
BEGIN
  IF TG_OP = 'UPDATE' AND NOT (OLD.tenant IS DISTINCT FROM NEW.tenant OR OLD.state IS DISTINCT FROM NEW.state
      OR OLD.currency IS DISTINCT FROM NEW.currency OR OLD.cost_micros IS DISTINCT FROM NEW.cost_micros
      OR OLD.gpu_milli IS DISTINCT FROM NEW.gpu_milli) THEN
    RETURN NULL;
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    INSERT INTO state_totals(tenant, state, currency, workloads, cost_micros, gpu_milli, writer)
      VALUES(OLD.tenant, OLD.state, OLD.currency, -1, -OLD.cost_micros, -OLD.gpu_milli, w)
      ON CONFLICT(tenant, state, currency, writer) DO UPDATE SET
        workloads = state_totals.workloads + excluded.workloads,
        cost_micros = state_totals.cost_micros + excluded.cost_micros,
        gpu_milli = state_totals.gpu_milli + excluded.gpu_milli;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO state_totals(tenant, state, currency, workloads, cost_micros, gpu_milli, writer)
      VALUES(NEW.tenant, NEW.state, NEW.currency, 1, NEW.cost_micros, NEW.gpu_milli, w)
      ON CONFLICT(tenant, state, currency, writer) DO UPDATE SET
        workloads = state_totals.workloads + excluded.workloads,
        cost_micros = state_totals.cost_micros + excluded.cost_micros,
        gpu_milli = state_totals.gpu_milli + excluded.gpu_milli;
  END IF;
  RETURN NULL;
END
$fn$;
)sql";

// 9: the rows an INSERT adds are counted by one trigger call per statement, over its
// transition table, rather than by a PL/pgSQL call and an upsert per row: a submission
// group's rows are one INSERT (store_submit.cc), and per row the trigger was a fifth of
// the journal session's CPU (bench/README.md, "A submission group's rows in one
// statement"). UPDATE and DELETE stay per row (migration 10 moves UPDATE).
// `state_totals_keep()` is unchanged; its INSERT branch now serves UPDATE alone.
constexpr const char* kTotalsPerStatement = R"sql(
CREATE FUNCTION state_totals_add_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO state_totals(tenant, state, currency, workloads, cost_micros, gpu_milli, writer)
    SELECT i.tenant, i.state, i.currency, COUNT(*), SUM(i.cost_micros), SUM(i.gpu_milli),
        COALESCE(current_setting('gpufed.writer', true), '')
      FROM inserted AS i GROUP BY i.tenant, i.state, i.currency
    ON CONFLICT(tenant, state, currency, writer) DO UPDATE SET
      workloads = state_totals.workloads + excluded.workloads,
      cost_micros = state_totals.cost_micros + excluded.cost_micros,
      gpu_milli = state_totals.gpu_milli + excluded.gpu_milli;
  RETURN NULL;
END
$fn$;
DROP TRIGGER state_totals_keep ON workloads;
CREATE TRIGGER state_totals_keep AFTER UPDATE OR DELETE ON workloads
  FOR EACH ROW EXECUTE FUNCTION state_totals_keep();
CREATE TRIGGER state_totals_add_inserted AFTER INSERT ON workloads REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION state_totals_add_inserted();
)sql";

// 10: the rows an UPDATE changes are moved between totals by one trigger call per
// statement, over its transition tables, as migration 9 did for INSERT: a pass's changes
// are one UPDATE per batch (store_rows.cc), and per row the trigger was a PL/pgSQL call
// and two upserts (bench/README.md, "A pass's changes in one statement"). Each old row
// leaves its totals (-1) and each new row joins its own (+1), summed per key: a row whose
// counted columns did not change cancels out, and a key whose sums are all zero is not
// written (the per-row trigger skipped such rows). DELETE stays per row.
constexpr const char* kTotalsPerUpdate = R"sql(
CREATE FUNCTION state_totals_move_updated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO state_totals(tenant, state, currency, workloads, cost_micros, gpu_milli, writer)
    SELECT c.tenant, c.state, c.currency, SUM(c.n), SUM(c.cost), SUM(c.gpu),
        COALESCE(current_setting('gpufed.writer', true), '')
      FROM (SELECT o.tenant, o.state, o.currency, -1 AS n, -o.cost_micros AS cost, -o.gpu_milli AS gpu
              FROM before_rows AS o
            UNION ALL
            SELECT w.tenant, w.state, w.currency, 1, w.cost_micros, w.gpu_milli FROM after_rows AS w) AS c
      GROUP BY c.tenant, c.state, c.currency
      HAVING SUM(c.n) <> 0 OR SUM(c.cost) <> 0 OR SUM(c.gpu) <> 0
    ON CONFLICT(tenant, state, currency, writer) DO UPDATE SET
      workloads = state_totals.workloads + excluded.workloads,
      cost_micros = state_totals.cost_micros + excluded.cost_micros,
      gpu_milli = state_totals.gpu_milli + excluded.gpu_milli;
  RETURN NULL;
END
$fn$;
DROP TRIGGER state_totals_keep ON workloads;
CREATE TRIGGER state_totals_keep AFTER DELETE ON workloads
  FOR EACH ROW EXECUTE FUNCTION state_totals_keep();
CREATE TRIGGER state_totals_move_updated AFTER UPDATE ON workloads
  REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
  FOR EACH STATEMENT EXECUTE FUNCTION state_totals_move_updated();
)sql";

// 11: workloads.decision_signature, what the loop last journalled of a workload it did
// not place (records.h): a new leader compares its first pass's decisions with it instead
// of journalling every queued workload again (bench/README.md, "A new term's first pass").
constexpr const char* kDecisionSignature = R"sql(
ALTER TABLE workloads ADD COLUMN decision_signature TEXT NOT NULL DEFAULT '';
)sql";

}  // namespace

const std::vector<const char*>& PostgresSchemaMigrations() {
  // Migration N is element N-1 (schema.h's SchemaVersion).
  static const std::vector<const char*> kMigrations = {
      kInitialSchema, kAttemptsAndUsage, kUnfinishedIndex,    kTenantNamespaces, kHistory,          kStateTotals,
      kMeteredDays,   kTotalsByWriter,   kTotalsPerStatement, kTotalsPerUpdate,  kDecisionSignature};
  return kMigrations;
}

}  // namespace gpufed::store
