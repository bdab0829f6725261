#pragma once
// The journal's tables in PostgreSQL (component `journal` of pg::Migrate): one row per
// record line, append-only by the engine's own rule (see README.md for the roles), the
// passes' snapshots its decisions name (version 2, write-once), and the paged read every
// reader of the journal shares.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "controller/common/status.h"
#include "controller/pg/connection.h"
#include "controller/pg/migrations.h"

namespace gpufed::pgjournal {

inline constexpr std::string_view kComponent = "journal";

// The migrations of component `journal`, versions 1..n.
std::span<const pg::Migration> JournalMigrations();

// The first version that holds gpufed_snapshots.
inline constexpr int kSnapshotsVersion = 2;

// Brings the journal's table to this binary's version (pg::Migrate). Run by the role that
// owns the table: it creates a table, a function and triggers.
Status MigrateJournal(pg::Connection& connection);

// OK when the database's journal schema is exactly this binary's version: the controller's
// role, which may not create anything, checks instead of migrating (it needs SELECT on
// gpufed_schema). FailedPrecondition naming both versions otherwise.
Status CheckJournalSchema(pg::Connection& connection);

// Appends `value` to a PostgreSQL array literal in text form being built in `out` (which
// starts "{" and is closed with "}" by the caller), quoted, '"' and '\' escaped: one
// statement parameter carries a whole commit's (or a pass's) values.
void AppendArrayElement(std::string_view value, std::string* out);

// A stored row: its seq and its line exactly as written (without the newline).
struct StoredRow {
  uint64_t seq = 0;
  std::string line;
};

// At most this many rows per SELECT: a record line is at most about 65 KB, so a page
// stays far below the pg layer's 64 MiB reply limit.
inline constexpr size_t kRowsPerPage = 500;

// Rows with from <= seq <= to in seq order, at most min(max, kRowsPerPage), appended to
// `out`; returns how many. Errors: Connection::Exec's.
Result<size_t> SelectRows(pg::Connection& connection, uint64_t from, uint64_t to, size_t max,
                          std::vector<StoredRow>* out);

}  // namespace gpufed::pgjournal
