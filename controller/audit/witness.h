#pragma once
// The witness side of c2sp.org/tlog-witness, as `gpufed audit witness` serves it: for each
// log it knows (an origin and the log's verifier key) it keeps the newest checkpoint it
// cosigned, and cosigns a new one only when the log's signature verifies and a
// consistency proof shows that the new tree extends the old one. It stores the new state
// (fdatasync, rename) before it answers, so a witness never cosigns two trees that are not
// one history, across restarts as well: a log host whose journal was rewritten, even by
// someone holding the log's key, cannot get that history cosigned.
//
// State: <state_dir>/logs/<sha256(origin) hex>.json holds the origin, the size and root
// cosigned last and that checkpoint; <state_dir>/witness.lock keeps a second witness
// process off the same folder. Losing the folder makes the witness forget: retire its key
// then rather than start it afresh (docs/audit-format.md, "Witnesses").
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "controller/audit/cosignature.h"
#include "controller/audit/env.h"
#include "controller/audit/signed_note.h"
#include "controller/common/mutex.h"
#include "controller/common/status.h"

namespace gpufed::audit {

struct WitnessOptions {
  Env* env = nullptr;  // required; must outlive the witness
  std::string state_dir;
  const CosignatureSigner* signer = nullptr;  // required; must outlive the witness
  // The logs witnessed: each verifier key's name is the log's origin line.
  std::vector<std::string> log_vkeys;
  std::function<uint64_t()> now_seconds;  // empty: the Env's clock
};

struct WitnessAnswer {
  int http_status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

class Witness {
 public:
  // Takes the state folder's lock (FailedPrecondition when another witness holds it) and
  // reads every log's state. InvalidArgument for a bad log key or two keys of one origin;
  // DataLoss for a state file that does not parse (never silently reset).
  static Result<std::unique_ptr<Witness>> Open(const WitnessOptions& options);

  // One add-checkpoint request body; the answer the protocol prescribes. Thread-safe:
  // requests are judged and stored one at a time.
  WitnessAnswer AddCheckpoint(std::string_view body) EXCLUDES(mu_);

  // The size this witness holds for `origin` (0: none yet).
  uint64_t CosignedSize(const std::string& origin) const EXCLUDES(mu_);

 private:
  struct LogState {
    NoteVerifier key;
    uint64_t size = 0;
    MerkleHash root{};
    std::string path;
  };
  Witness(const WitnessOptions& options, std::unique_ptr<FileLock> lock) : options_(options), lock_(std::move(lock)) {}
  // Writes `state`'s file as holding `size` and `root` (atomically, synced).
  Status Store(const LogState& state, uint64_t size, const MerkleHash& root, const std::string& checkpoint)
      REQUIRES(mu_);

  WitnessOptions options_;
  std::unique_ptr<FileLock> lock_;
  mutable Mutex mu_;
  std::map<std::string, LogState> logs_ GUARDED_BY(mu_);  // by origin
};

}  // namespace gpufed::audit
