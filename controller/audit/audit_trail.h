#pragma once
// A controller's audit trail as one resource: the file system it writes through, the
// signing key, the journal and its tiles (tile_store.h, served through log_view.h), and
// the store of the passes' snapshots, opened in that order and released in reverse. The App
// (runtime/app.h) owns one for the life of the process and lends it to the loop, which
// appends; nothing else writes to the journal.
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "controller/audit/env.h"
#include "controller/audit/journal.h"
#include "controller/audit/journal_storage.h"
#include "controller/audit/log_view.h"
#include "controller/audit/signing.h"
#include "controller/audit/snapshot_store.h"
#include "controller/audit/tile_store.h"
#include "controller/common/durability.h"
#include "controller/common/status.h"

namespace gpufed::audit {

struct AuditTrailOptions {
  std::string dir;       // the audit folder, <state>/audit: the key pair and journal/ live here
  Env* env = nullptr;    // null: the real file system; tests pass a FaultEnv (must outlive the trail)
  // The log's private key, kept outside the state folder (`gpufed run --audit-key`); empty:
  // <dir>/signing.key, made on the first start (signing_key.h).
  std::string key_file;
  // kUnsynced (simulations only, common/durability.h): nothing waits for the disk.
  Durability durability = Durability::kSynced;
  // Rotate the journal's segment once it reaches this size (JournalOptions::segment_bytes).
  uint64_t segment_bytes = uint64_t{64} << 20;
  // An archive folder of this journal (`gpufed audit archive`; empty: none), read only:
  // the tiles are rebuilt and the entry bundles served from its segments too (archive_env.h).
  std::string archive_dir;
  // Where the journal's lines are kept. Null: the file journal in <dir>/journal
  // (AuditJournal::Open), as before. Otherwise Open calls it once and opens the journal
  // on that storage (AuditJournal::OpenWith: a PostgreSQL table, controller/pgjournal);
  // segment_bytes and archive_dir then do not apply. An error fails Open.
  std::function<Result<std::unique_ptr<JournalStorage>>()> open_storage;
  // Readers of that same journal, required with open_storage: the tiles (derived data,
  // still kept in <dir>/tiles) catch up from it, the entry bundles are read through it,
  // and source_factory() hands it on (shippers).
  JournalSourceFactory open_source;
  // Where the passes' snapshots are kept. Null: the file store in <dir>/snapshots
  // (FileSnapshotStore). Otherwise Open calls it once, after the journal is open (a
  // PostgreSQL table beside the journal's, controller/pgjournal); an error fails Open.
  std::function<Result<std::unique_ptr<SnapshotStore>>()> open_snapshots;
};

class AuditTrail {
 public:
  // Reads or creates the signing key, then opens (and recovers) the journal. A torn tail
  // that recovery cut off is journalled at once (`journal-repaired`), before anything
  // else is appended. Errors name the folder.
  static Result<std::unique_ptr<AuditTrail>> Open(const AuditTrailOptions& options);
  AuditTrail(const AuditTrail&) = delete;
  AuditTrail& operator=(const AuditTrail&) = delete;
  // Closes the journal without a record (the App appends controller-stop and Closes first).
  ~AuditTrail();

  AuditJournal& journal() { return *journal_; }
  // The passes' snapshots, which decisions name in their `inputs` (the loop writes them).
  SnapshotStore& snapshots() { return *snapshots_; }
  const AuditJournal& journal() const { return *journal_; }
  // What the journal and the pass snapshots beside it are written through.
  Env* env() const { return env_; }
  const std::string& dir() const { return dir_; }
  const std::string& key_id() const { return key_id_; }
  // The journal's tree for /v1/audit/log/ (its tiles may be unavailable: they are derived
  // data, and a start never fails for them).
  const LogView& log() const { return *log_; }
  // The tree's tiles, for consistency proofs to witnesses; null when unavailable.
  TileStore* tiles() const { return tiles_.get(); }
  // New readers of the journal: the options' open_source, or the file journal's
  // JournalReader (with the archive's segments when an archive was given).
  const JournalSourceFactory& source_factory() const { return open_source_; }

 private:
  AuditTrail() = default;

  std::string dir_;
  // Declared in the order they are made; destroyed in reverse (the journal first).
  std::unique_ptr<Env> own_env_;
  std::unique_ptr<Env> unsynced_env_;
  Env* env_ = nullptr;
  std::unique_ptr<Env> archive_view_;  // env_ with the archive's segments, for the tiles and the log
  Env* read_env_ = nullptr;            // archive_view_, or env_ without an archive
  std::optional<Signer> signer_;
  std::string key_id_;
  JournalSourceFactory open_source_;
  std::unique_ptr<TileStore> tiles_;      // outlives the journal, which appends to it
  std::unique_ptr<AuditJournal> journal_;
  std::unique_ptr<SnapshotStore> snapshots_;
  std::unique_ptr<LogView> log_;
};

}  // namespace gpufed::audit
