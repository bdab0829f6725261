#pragma once
// Content-addressed, write-once JSON objects beside the journal: the placer inputs replay
// needs (snapshots, and the workload documents and running entries they name). Each is
// named by "sha256:<hex>" of its bytes, so a name in a journalled decision fixes the
// bytes it stands for wherever they are kept.
//
// Two implementations: FileSnapshotStore (file_snapshot_store.h: append-only packs in
// <audit>/snapshots, the default) and, under `gpufed run --store postgres://`, a table of
// the database beside the journal's (controller/pgjournal/pg_snapshot_store.h), so that
// the decisions a leader journalled can be replayed after its host is gone. The App picks
// one where it opens the audit trail (AuditTrailOptions::open_snapshots).
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "controller/common/status.h"

namespace gpufed::audit {

class SnapshotStore {
 public:
  virtual ~SnapshotStore() = default;

  // Stores `text` unless this store already holds it, and returns its name. Not durable
  // until Sync() returns OK: a writer adds a pass's objects and syncs once, before any
  // decision names them. One writer at a time (the reconcile loop).
  virtual Result<std::string> Add(std::string_view text) = 0;
  // Makes every object added so far durable. An implementation that cannot tell what a
  // failed sync left behind refuses every later Add and Sync with its error.
  virtual Status Sync() = 0;
  // The object's bytes: NotFound for an unknown name, DataLoss when the stored bytes no
  // longer match it, InvalidArgument for a name that is not "sha256:<64 hex>".
  virtual Result<std::string> GetText(const std::string& digest) = 0;

  // Add + Sync of one document in its canonical form (compact, sorted keys).
  Result<std::string> Put(const nlohmann::json& document);
  // GetText, parsed: DataLoss when the object is not JSON.
  Result<nlohmann::json> Get(const std::string& digest);
};

// The name of `text`: "sha256:" and the 64 hex digits of its SHA-256.
std::string SnapshotDigest(std::string_view text);
// The 64 hex digits of a "sha256:<hex>" name, or "" when `digest` is not one.
std::string DigestHex(const std::string& digest);

}  // namespace gpufed::audit
