#include "controller/pgjournal/schema.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

namespace gpufed::pgjournal {
namespace {

// Version 1. The line is kept exactly as written (TEXT: the journal's lines are ASCII,
// docs/audit-format.md); seq, time, kind and hash repeat its header so that recovery
// and readers find rows without parsing every line. No leaf-hash column: recovery
// starts at the last checkpoint, whose signed frontier is the tree before it (README.md).
//
// The triggers refuse UPDATE, DELETE and TRUNCATE for every role, the owner and
// superusers included (only ALTER TABLE ... DISABLE TRIGGER by the owner gets past them,
// and a changed row then fails the chain and the signed checkpoints). 42501
// (insufficient_privilege): pg/sqlstate.h maps it to PermissionDenied, what it is.
constexpr std::string_view kVersion1 = R"sql(
CREATE TABLE gpufed_journal (
  seq         bigint PRIMARY KEY CHECK (seq > 0),
  time_micros bigint NOT NULL,
  kind        text   NOT NULL,
  hash        text   NOT NULL CHECK (length(hash) = 64),
  line        text   NOT NULL
);
-- Recovery's first question, "where is the last checkpoint": one index entry per commit.
CREATE INDEX gpufed_journal_checkpoints ON gpufed_journal (seq) WHERE kind = 'checkpoint';
CREATE FUNCTION gpufed_journal_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  RAISE EXCEPTION 'gpufed_journal is append-only: % refused', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END
$fn$;
CREATE TRIGGER gpufed_journal_no_update_or_delete BEFORE UPDATE OR DELETE ON gpufed_journal
  FOR EACH ROW EXECUTE FUNCTION gpufed_journal_refuse_change();
CREATE TRIGGER gpufed_journal_no_truncate BEFORE TRUNCATE ON gpufed_journal
  FOR EACH STATEMENT EXECUTE FUNCTION gpufed_journal_refuse_change();
)sql";

// Version 2: the passes' snapshots (pg_snapshot_store.h), which the journal's decisions
// name by "sha256:<hex>" of their bytes. Kept in the database beside the journal so that
// a decision can be replayed when the replica that journalled it is gone. Write-once:
// the CHECK makes the database itself refuse an object that is not its address's bytes,
// a second writer of an object inserts nothing (ON CONFLICT DO NOTHING, the same bytes),
// and the triggers refuse UPDATE, DELETE and TRUNCATE as the journal's do.
constexpr std::string_view kVersion2 = R"sql(
CREATE TABLE gpufed_snapshots (
  address text  PRIMARY KEY CHECK (address ~ '^sha256:[0-9a-f]{64}$'),
  bytes   bytea NOT NULL,
  CONSTRAINT gpufed_snapshots_address_is_digest CHECK (address = 'sha256:' || encode(sha256(bytes), 'hex'))
);
CREATE FUNCTION gpufed_snapshots_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  RAISE EXCEPTION 'gpufed_snapshots is write-once: % refused', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END
$fn$;
CREATE TRIGGER gpufed_snapshots_no_update_or_delete BEFORE UPDATE OR DELETE ON gpufed_snapshots
  FOR EACH ROW EXECUTE FUNCTION gpufed_snapshots_refuse_change();
CREATE TRIGGER gpufed_snapshots_no_truncate BEFORE TRUNCATE ON gpufed_snapshots
  FOR EACH STATEMENT EXECUTE FUNCTION gpufed_snapshots_refuse_change();
)sql";

// Version 3: the address's pattern CHECK goes. The digest CHECK already makes every
// address "sha256:" and 64 lowercase hex digits (encode(..., 'hex') writes nothing else),
// and PostgreSQL's regular expression cost about 20 us per object, two thirds of a pass's
// INSERT of its snapshots (bench/README.md, session 59).
constexpr std::string_view kVersion3 = R"sql(
ALTER TABLE gpufed_snapshots DROP CONSTRAINT gpufed_snapshots_address_check;
)sql";

constexpr std::array<pg::Migration, 3> kMigrations = {{
    {1, "the append-only audit journal table", kVersion1},
    {2, "the write-once table of the passes' snapshots", kVersion2},
    {3, "the snapshots' addresses checked by their digest alone", kVersion3},
}};

}  // namespace

std::span<const pg::Migration> JournalMigrations() { return kMigrations; }

Status MigrateJournal(pg::Connection& connection) { return pg::Migrate(connection, kComponent, kMigrations); }

Status CheckJournalSchema(pg::Connection& connection) {
  Result<int> version = pg::SchemaVersion(connection, kComponent);
  if (!version.ok()) return version.status();
  const int known = static_cast<int>(kMigrations.size());
  if (*version == known) return Status::Ok();
  return FailedPrecondition("the database's journal schema is version " + std::to_string(*version) +
                            ", this gpufed's is " + std::to_string(known) +
                            ": the owner role migrates it (gpufed's PgJournalStorage with migrate set)");
}

void AppendArrayElement(std::string_view value, std::string* out) {
  if (out->size() > 1) out->push_back(',');
  out->push_back('"');
  for (char c : value) {
    if (c == '"' || c == '\\') out->push_back('\\');
    out->push_back(c);
  }
  out->push_back('"');
}

namespace {

int64_t AsBigint(uint64_t seq) {
  return seq > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(seq);
}

}  // namespace

Result<size_t> SelectRows(pg::Connection& connection, uint64_t from, uint64_t to, size_t max,
                          std::vector<StoredRow>* out) {
  const size_t page = std::min(max, kRowsPerPage);
  if (page == 0 || from > to) return size_t{0};
  Result<pg::Rows> rows = connection.Exec(
      "read journal rows", "SELECT seq, line FROM gpufed_journal WHERE seq >= $1 AND seq <= $2 ORDER BY seq LIMIT $3",
      {AsBigint(from), AsBigint(to), static_cast<int64_t>(page)});
  if (!rows.ok()) return rows.status();
  for (size_t i = 0; i < rows->size(); ++i) {
    Result<int64_t> seq = rows->Int64(i, "seq");
    if (!seq.ok()) return seq.status();
    Result<std::string> line = rows->Text(i, "line");
    if (!line.ok()) return line.status();
    out->push_back({static_cast<uint64_t>(*seq), std::move(*line)});
  }
  return rows->size();
}

}  // namespace gpufed::pgjournal
