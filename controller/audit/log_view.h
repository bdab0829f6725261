#pragma once
// What the controller serves read-only under /v1/audit/log/: the journal's tree in the
// C2SP tlog-tiles layout, so that an external verifier needs nothing of gpufed's code.
//   checkpoint                  the newest signed checkpoint (a signed note), with the
//                               cosignatures of the witnesses that cosigned that very
//                               checkpoint (kept in <audit>/witnessed/, witness_client.h)
//   tile/<L>/<N>[.p/<W>]        hash tiles (tile_store.h)
//   tile/entries/<N>[.p/<W>]    entry bundles: each record line, without its newline,
//                               after its length as a big-endian uint16
#include <string>
#include <string_view>
#include <utility>

#include "controller/audit/env.h"
#include "controller/audit/journal.h"
#include "controller/audit/tile_store.h"
#include "controller/common/status.h"

namespace gpufed::audit {

class LogView {
 public:
  // All must outlive the view; `tiles` may be null (then tiles answer Unavailable with
  // `tiles_status`). Entry bundles are read through `open_source` when given (a journal
  // kept elsewhere), else from the file journal of `audit_dir`.
  LogView(Env* env, std::string audit_dir, const AuditJournal* journal, TileStore* tiles, Status tiles_status,
          JournalSourceFactory open_source = nullptr)
      : env_(env),
        audit_dir_(std::move(audit_dir)),
        journal_(journal),
        tiles_(tiles),
        tiles_status_(std::move(tiles_status)),
        open_source_(std::move(open_source)) {}

  // NotFound before the journal's first v2 checkpoint.
  Result<std::string> Checkpoint() const;
  // `path` is what follows "tile/": "<L>/<N>[.p/<W>]" or "entries/<N>[.p/<W>]".
  // InvalidArgument for a path tlog-tiles does not name, NotFound beyond the tree.
  Result<std::string> Tile(std::string_view path) const;
  // True for paths under "tile/entries/": they hold every tenant's records.
  static bool IsEntryBundle(std::string_view path) { return path.substr(0, 8) == "entries/"; }

 private:
  Result<std::string> EntryBundle(uint64_t index, uint64_t width) const;
  // `checkpoint` plus the witnesses' cosignature lines of notes in witnessed/ whose body is
  // the same checkpoint; `checkpoint` unchanged when there are none or they cannot be read.
  std::string WithCosignatures(const std::string& checkpoint) const;

  Env* env_;
  std::string audit_dir_;
  const AuditJournal* journal_;
  TileStore* tiles_;
  Status tiles_status_;
  JournalSourceFactory open_source_;  // null: the file journal's JournalReader
};

}  // namespace gpufed::audit
