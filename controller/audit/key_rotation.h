#pragma once
// `gpufed audit rotate-key`: an explicit, journalled change of a journal's signing key
// (docs/audit-format.md, "Key rotation"; docs/operations.md has the procedure). With the
// controller stopped, under the journal's lock:
//
//   1. the journal is opened with the current key (a start's checks) and a key-rotated
//      record naming the new key is appended; its commit ends with the current key's
//      checkpoint: the key in force authorises the new one;
//   2. the journal is opened with the new key, which signs a checkpoint over all of it,
//      the old key's checkpoint included: the handover is signed by both keys;
//   3. signing.pub beside the journal becomes the new public key (an atomic replace);
//   4. when the current key is the audit folder's own signing.key, the new private key
//      replaces it (atomically, 0600); a key kept elsewhere is the operator's to move.
//
// Each step is found done, or done, when the command runs again with the same keys, so a
// crash anywhere leaves a journal that a rerun completes; until then a start with either
// key is refused and says to run it again (journal_recovery.cc).
#include <cstdint>
#include <string>

#include "controller/audit/env.h"
#include "controller/audit/signing.h"
#include "controller/common/status.h"

namespace gpufed::audit {

struct KeyRotationOptions {
  Env* env = nullptr;               // required; must outlive the call
  std::string audit_dir;            // holds journal/ and signing.pub
  const Signer* current = nullptr;  // the key in force (required)
  const Signer* next = nullptr;     // the new key (required)
  // Step 4: the current key is <audit_dir>/signing.key. False when it lives elsewhere
  // (`gpufed run --audit-key`): the operator puts the new key in its place.
  bool install_key = false;
  std::string operator_name;  // who rotates, recorded
  std::string reason;         // why, recorded when not empty
};

// What RotateJournalKey did. A run after a complete rotation does nothing.
struct KeyRotationReport {
  std::string origin;          // the log's
  std::string new_vkey;        // the new key's signed-note verifier key
  uint64_t rotated_seq = 0;    // the key-rotated record
  bool appended = false;       // step 1 was done now (else by an earlier run)
  uint64_t old_signed_seq = 0;     // step 1's checkpoint, when done now
  uint64_t new_signed_seq = 0;     // step 2's checkpoint, when done now
  uint64_t repaired_seq = 0;       // a journal-repaired record, when an open cut a torn tail
  bool pub_written = false;        // step 3 was done now
  bool key_installed = false;      // step 4 was done now
};

// Rotates the journal in `audit_dir` from `current` to `next` (the steps above).
// FailedPrecondition when the journal's lock is held (a running controller), when the
// journal does not open with the current key (and no rotation from it to `next` is under
// way), or when it has no signed-note checkpoint (no key in force to hand over); NotFound
// without a journal. A refusal before step 1 changes nothing.
Result<KeyRotationReport> RotateJournalKey(const KeyRotationOptions& options);

}  // namespace gpufed::audit
