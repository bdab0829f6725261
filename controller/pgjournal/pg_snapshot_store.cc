#include "controller/pgjournal/pg_snapshot_store.h"

#include "controller/common/sha256.h"
#include "controller/pg/migrations.h"
#include "controller/pgjournal/pg_record_source.h"
#include "controller/pgjournal/schema.h"

namespace gpufed::pgjournal {

Result<std::unique_ptr<PgSnapshotStore>> PgSnapshotStore::Open(std::unique_ptr<pg::Connection> connection,
                                                               PgSnapshotStoreOptions options) {
  if (connection == nullptr) return FailedPrecondition("the snapshots' PostgreSQL store has no connection");
  std::unique_ptr<PgSnapshotStore> store(new PgSnapshotStore(std::move(connection), std::move(options)));
  pg::Connection& c = *store->connection_;
  if (store->options_.read_only) {
    // A database written before version 2 holds no snapshots: its decisions' inputs were
    // kept in each replica's folder, and a read says NotFound, as for a missing object.
    Result<int> version = pg::SchemaVersion(c, kComponent);
    if (!version.ok()) return version.status();
    store->has_table_ = *version >= kSnapshotsVersion;
  } else {
    GPUFED_RETURN_IF_ERROR(store->options_.migrate ? MigrateJournal(c) : CheckJournalSchema(c));
  }
  return store;
}

Result<std::unique_ptr<PgSnapshotStore>> PgSnapshotStore::ConnectReader(std::string_view uri_or_conninfo) {
  Result<std::unique_ptr<pg::Connection>> connection = ConnectReadOnly(uri_or_conninfo);
  if (!connection.ok()) return connection.status();
  return Open(std::move(*connection), {.read_only = true});
}

void PgSnapshotStore::Remember(const std::string& hex) {
  if (known_.size() >= kKnownLimit) known_.clear();
  known_.insert(hex);
}

Result<std::string> PgSnapshotStore::Add(std::string_view text) {
  if (options_.read_only) return FailedPrecondition("a reader of the snapshots' table stores nothing");
  std::string hex = Sha256Hex(text);
  std::string digest = "sha256:" + hex;
  if (known_.count(hex) > 0 || !pending_hex_.insert(hex).second) return digest;
  pending_.emplace_back(std::move(hex), std::string(text));
  return digest;
}

Status PgSnapshotStore::Sync() {
  if (options_.read_only) return FailedPrecondition("a reader of the snapshots' table stores nothing");
  if (pending_.empty()) return Status::Ok();
  // One statement for the pass: the addresses and the objects as two text arrays.
  std::string addresses = "{", objects = "{";
  for (const auto& [hex, text] : pending_) {
    AppendArrayElement("sha256:" + hex, &addresses);
    AppendArrayElement(text, &objects);
  }
  addresses.push_back('}');
  objects.push_back('}');
  // BEGIN and the fence (when it defers its check) go with the INSERT, in one round trip.
  pg::Transaction tx = pg::Transaction::BeginDeferred(*connection_, "store the pass's snapshots");
  if (options_.fence) GPUFED_RETURN_IF_ERROR(options_.fence(tx));
  // The objects are canonical JSON, ASCII only (audit/canonical_json.h): the same bytes
  // in every database encoding. The table's CHECK compares them with their address.
  Result<pg::Rows> inserted =
      tx.Exec("store the pass's snapshots",
              "INSERT INTO gpufed_snapshots (address, bytes) "
              "SELECT r.a, convert_to(r.o, 'UTF8') FROM unnest($1::text[], $2::text[]) AS r(a, o) "
              "ON CONFLICT (address) DO NOTHING",
              {addresses, objects});
  if (!inserted.ok()) return inserted.status();
  GPUFED_RETURN_IF_ERROR(tx.Commit());
  for (const auto& object : pending_) Remember(object.first);
  pending_.clear();
  pending_hex_.clear();
  return Status::Ok();
}

Result<std::string> PgSnapshotStore::GetText(const std::string& digest) {
  const std::string hex = audit::DigestHex(digest);
  if (hex.empty()) return InvalidArgument("not a snapshot digest: " + digest);
  // As the file store does: what is read is durable, and a decision names nothing else.
  if (pending_hex_.count(hex) > 0) GPUFED_RETURN_IF_ERROR(Sync());
  if (!has_table_) {
    return NotFound("snapshot " + digest +
                    ": the database keeps no snapshots (its journal schema predates gpufed_snapshots; they were "
                    "kept in the leader's state folder, <state>/audit/snapshots)");
  }
  Result<pg::Rows> rows = connection_->Exec(
      "read a snapshot", "SELECT convert_from(bytes, 'UTF8') AS object FROM gpufed_snapshots WHERE address = $1",
      {digest});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return NotFound("snapshot " + digest + " is not in gpufed_snapshots");
  Result<std::string> text = rows->Text(0, "object");
  if (!text.ok()) return text.status();
  if (Sha256Hex(*text) != hex)
    return Status(StatusCode::kDataLoss, "snapshot " + digest + " does not match its digest");
  Remember(hex);
  return text;
}

}  // namespace gpufed::pgjournal
