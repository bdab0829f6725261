// PostgreSQL 15's migrations (issue 38): empty until its backend is written, so a Store on
// a PostgreSQL connection refuses to open (Store::Open: no schema for its engine). What
// the list must hold, version for version with schema_sqlite.cc (schema.h):
// - the same tables, columns and indexes, with PostgreSQL's types: BIGINT where SQLite
//   says INTEGER (every *_ms, *_micros, seq, gpu_milli, attempt: SQLite's INTEGER is 64
//   bits, PostgreSQL's 32), DOUBLE PRECISION where SQLite says REAL (PostgreSQL's REAL is
//   4 bytes), TEXT for TEXT, and INTEGER 0/1 for the flags (the Store binds and reads
//   them as integers); the partial indexes as they are (PostgreSQL has them too);
// - `status_history.id` and `decisions.seq` as BIGINT GENERATED ALWAYS AS IDENTITY
//   PRIMARY KEY (SQLite's INTEGER PRIMARY KEY is its rowid), and a column named `rowid`,
//   BIGINT GENERATED ALWAYS AS IDENTITY, on `attempts` and `actions`, whose implicit
//   rowid the Store orders and marks by (README.md, "Portable SQL");
// - the schema version in a table of the backend's (SQLite keeps PRAGMA user_version);
// - the totals' triggers as plpgsql trigger functions (schema_sqlite.cc says, beside
//   each SQLite trigger, what its function does);
// - no data migrations (version 4 copies every row into new tables): a PostgreSQL store
//   starts empty, so each entry may create what its version adds directly, as long as
//   the store at version N holds what SQLite's does at N.
#include "controller/store/schema.h"

namespace gpufed::store {

const std::vector<const char*>& PostgresSchemaMigrations() {
  static const std::vector<const char*> kMigrations;
  return kMigrations;
}

}  // namespace gpufed::store
