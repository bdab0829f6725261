#pragma once
// The file SnapshotStore (snapshot_store.h), the default: objects are appended to pack
// files, `<audit>/snapshots/pack-NNNNNN.objects`, each as
//   "sha256:<64 hex> <length>\n" <length bytes of compact JSON> "\n"
// and named by "sha256:<hex>" of their bytes. A pack is only ever appended to; a writer
// starts a new pack when it opens (and past kPackBytes), so two processes never append to
// the same one. A torn tail (a crash mid-append) hides only the objects after it, which no
// durable journal record names: the loop syncs its objects before it appends decisions.
// Stores written before packs (`snapshots/<2 hex>/<64 hex>.json`, one file per object)
// are still read.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "controller/audit/env.h"
#include "controller/audit/snapshot_store.h"
#include "controller/common/status.h"

namespace gpufed::audit {

class FileSnapshotStore final : public SnapshotStore {
 public:
  // A pack is closed and the next one begun once it holds this many bytes.
  static constexpr uint64_t kPackBytes = uint64_t{64} << 20;
  // The largest object Get reads (a bound against a corrupt length).
  static constexpr uint64_t kMaxObjectBytes = uint64_t{256} << 20;

  // `env` must outlive the store. One writer at a time (the reconcile loop); readers in
  // other processes may run concurrently.
  FileSnapshotStore(Env* env, std::string audit_dir);

  // Appends `text` unless this store has already added or read it, and returns its name.
  // Not durable until Sync() returns OK. (An object written by an earlier process may be
  // appended again; the copies are the same bytes, and Get takes either.)
  Result<std::string> Add(std::string_view text) override;
  // Makes every object added so far durable (fdatasync of the pack; the folder once per
  // new pack). A failed append or sync leaves the pack's state unknown, so the store
  // refuses every later Add and Sync with that error (as the journal does): objects
  // indexed but never synced must not be named by a decision.
  Status Sync() override;
  // NotFound for an unknown name; DataLoss when the stored bytes no longer match it.
  Result<std::string> GetText(const std::string& digest) override;

 private:
  struct Location {
    std::string pack;
    uint64_t offset = 0;  // of the object's bytes
    uint64_t length = 0;
  };
  Status OpenPack();
  // Indexes objects appended to the packs since the last scan.
  Status Scan();
  Status ScanPack(const std::string& name, uint64_t& offset);

  Env* env_;
  std::string dir_;
  // Writing.
  std::unique_ptr<WritableFile> pack_;
  std::string pack_name_;
  uint64_t pack_size_ = 0;
  bool pack_dir_synced_ = true;
  bool dirty_ = false;
  Status failed_;  // sticky
  // Reading: every object indexed so far, and how far each pack has been scanned.
  std::unordered_map<std::string, Location> index_;  // hex -> where
  std::map<std::string, uint64_t> scanned_;          // pack name -> scanned up to
};

}  // namespace gpufed::audit
