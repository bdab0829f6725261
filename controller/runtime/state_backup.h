#pragma once
// `gpufed state backup` and `gpufed state restore`: a consistent copy of a controller's
// state folder, taken while it runs, and putting one back into a new folder.
//
// What a backup holds (the state folder's layout, app.h), copied in this order:
//   gpufed.db           the store, as of one read transaction (SQLite's online backup);
//   connectors/         the connectors' ledgers and folders, right after the store, so
//                       the two are as close in time as they can be; audit/signing.pub;
//   audit/journal/      the journal up to the first signed checkpoint that covers every
//                       record the store copy can rely on (the journal is written ahead of
//                       the store), so the copy ends signed (audit/journal_copy.h); a
//                       running controller writes one within its --checkpoint-interval;
//   audit/snapshots/    then the content the journal's records point at (append-only packs);
//   audit/cursors/      the sinks' cursors, one past the copy's last record set back to it;
//   backup.json         written last: what the backup is (version, journal end, store
//                       schema) and every file's size and SHA-256, which restore checks.
// Secrets stay out unless asked for (`--include-secrets`): audit/signing.key (whoever
// holds it can sign a forged journal) and admin.token.
//
// Restore copies a checked backup into a folder that does not exist or is empty: it never
// writes over a state folder, live or not. A controller started on it goes on from the
// backup's checkpoint; its first pass observes every cluster again.
#include <cstdint>
#include <string>

#include "controller/common/duration.h"
#include "controller/common/status.h"

namespace gpufed::runtime {

struct BackupOptions {
  std::string state_dir;
  std::string destination;       // must not exist, or be an empty folder
  bool include_secrets = false;  // audit/signing.key and admin.token
  // How long to wait for the running controller's next checkpoint.
  Duration wait = Duration::FromSeconds(120);
};

struct BackupSummary {
  uint64_t journal_last_seq = 0;  // the checkpoint the journal copy ends with
  uint64_t files = 0;
  uint64_t bytes = 0;
};

Result<BackupSummary> BackupState(const BackupOptions& options);

// Checks every file of `backup` against its backup.json, then copies it into `state_dir`
// (created 0700; refused when it exists and is not empty).
Result<BackupSummary> RestoreState(const std::string& backup, const std::string& state_dir);

}  // namespace gpufed::runtime
