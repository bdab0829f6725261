#pragma once
// The passes' snapshots in PostgreSQL (issue 38): audit::SnapshotStore over one
// pg::Connection, the table gpufed_snapshots (schema.h, version 2 of the journal's
// component) beside the journal whose decisions name its objects. Under `gpufed run
// --store postgres://...` the loop writes here instead of <state>/audit/snapshots, so the
// decisions a leader journalled replay after its host is gone (`gpufed audit replay
// --store`).
//
// Add only buffers; Sync writes every buffered object in one transaction (BEGIN, the
// fence, one INSERT ... SELECT FROM unnest(...) ON CONFLICT (address) DO NOTHING, COMMIT):
// one round trip and one commit per pass, whatever its number of objects. A row is
// write-once: an object stored by an earlier pass or another replica is the same bytes,
// so the conflict inserts nothing, and the table's triggers refuse UPDATE, DELETE and
// TRUNCATE.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "controller/audit/snapshot_store.h"
#include "controller/common/status.h"
#include "controller/pg/connection.h"
#include "controller/pg/transaction.h"

namespace gpufed::pgjournal {

struct PgSnapshotStoreOptions {
  // Runs inside every write transaction right after BEGIN, before the INSERT: the term's
  // fence (ha::CheckFence with the leader's token, as PgJournalStorageOptions::fence). A
  // failing fence fails Sync with its status and nothing is written: a deposed leader
  // stores no object. Empty: no fence (one writer, tests).
  std::function<Status(pg::Transaction&)> fence;
  // Open migrates the journal's component (MigrateJournal: the owner role); false checks
  // its version instead (CheckJournalSchema: the controller's role).
  bool migrate = true;
  // A reader: Open neither migrates nor checks (an older database without the table reads
  // as holding no object), and Add and Sync are refused.
  bool read_only = false;
};

class PgSnapshotStore final : public audit::SnapshotStore {
 public:
  // Migrates or checks the schema as `options` say (a reader only asks the version).
  static Result<std::unique_ptr<PgSnapshotStore>> Open(std::unique_ptr<pg::Connection> connection,
                                                       PgSnapshotStoreOptions options);
  // A reader for the CLI's `--store` (pgjournal::ConnectReadOnly's rules and session).
  static Result<std::unique_ptr<PgSnapshotStore>> ConnectReader(std::string_view uri_or_conninfo);

  // Buffers `text` unless this store knows it is stored or buffered already; its name.
  Result<std::string> Add(std::string_view text) override;
  // Stores every buffered object in one fenced transaction. On failure nothing was
  // written, or (the connection lost at COMMIT) the outcome is unknown: the objects stay
  // buffered and the next Sync sends them again, which the write-once rows make safe
  // (ON CONFLICT DO NOTHING), so a failure is not sticky as the file store's is.
  Status Sync() override;
  // SELECT by address (a buffered object is synced first); the bytes are checked against
  // the name: NotFound, DataLoss, or the connection's errors.
  Result<std::string> GetText(const std::string& digest) override;

  // Objects buffered and not yet synced (tests).
  size_t pending() const { return pending_.size(); }

 private:
  PgSnapshotStore(std::unique_ptr<pg::Connection> connection, PgSnapshotStoreOptions options)
      : connection_(std::move(connection)), options_(std::move(options)) {}
  void Remember(const std::string& hex);

  std::unique_ptr<pg::Connection> connection_;
  const PgSnapshotStoreOptions options_;
  bool has_table_ = true;  // false: a reader of a database older than the table
  // Buffered by Add, written by the next Sync: (hex, bytes), and the hexes for Add.
  std::vector<std::pair<std::string, std::string>> pending_;
  std::unordered_set<std::string> pending_hex_;
  // Hexes known stored (synced or read): Add sends them no more. A cache only, cleared
  // past kKnownLimit (an object sent again inserts nothing).
  static constexpr size_t kKnownLimit = size_t{1} << 20;
  std::unordered_set<std::string> known_;
};

}  // namespace gpufed::pgjournal
