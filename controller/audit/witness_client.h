#pragma once
// The log's side of c2sp.org/tlog-witness: asks one witness to cosign a checkpoint, with a
// consistency proof from the size the witness holds (learnt from a 409 when the log does
// not know it), checks the cosignature with the witness's key, and keeps the newest
// cosigned checkpoint beside the journal, in <audit>/witnessed/<id>.note: the checkpoint,
// the log's signature and the witness's cosignature, as one signed note. Those files are
// not the journal (nothing in them is trusted without the keys), replaced atomically; an
// auditor's `gpufed audit verify --require-witnessed` reads them.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/audit/cosignature.h"
#include "controller/audit/env.h"
#include "controller/audit/merkle.h"
#include "controller/audit/sinks/https_post.h"
#include "controller/common/status.h"

namespace gpufed::audit {

// Where a witness's newest cosigned checkpoint is kept: <audit_dir>/witnessed/<16 hex of
// SHA-256 of the witness key's name>.note.
std::string WitnessedNotePath(const std::string& audit_dir, const std::string& witness_key_name);
inline constexpr char kWitnessedDir[] = "witnessed";

// One `*.note` file of <audit_dir>/witnessed/ and what it holds: ResourceExhausted for a
// file over kMaxNoteBytes, which is never read into memory; InvalidArgument when it is
// not a signed note. Nothing in it is trusted until the keys verify it.
struct WitnessedFile {
  std::string file;  // the name inside witnessed/
  Result<Note> note;
};
// The folder's note files in name order; none when the folder does not exist.
Result<std::vector<WitnessedFile>> ReadWitnessedNotes(Env& env, const std::string& audit_dir);

struct WitnessClientOptions {
  Env* env = nullptr;  // required; must outlive the client
  std::string audit_dir;
  std::string vkey;        // the witness's verifier key (type 0x04)
  HttpsPostOptions https;  // url: the witness's prefix; "/add-checkpoint" is appended
};

struct CosignedCheckpoint {
  uint64_t size = 0;
  uint64_t timestamp = 0;  // the witness's clock, seconds since the epoch
  std::string note;        // checkpoint, log signature, cosignature
};

class WitnessClient {
 public:
  // InvalidArgument for a bad verifier key. Reads the stored cosigned checkpoint, if any,
  // as the size the witness is believed to hold.
  static Result<std::unique_ptr<WitnessClient>> Create(WitnessClientOptions options);

  // Asks the witness to cosign `checkpoint` (a note the log signed), whose tree `tree`
  // holds. Returns the stored cosigned checkpoint. DataLoss when the witness says the
  // checkpoint does not extend what it cosigned (422) or holds a larger tree than this
  // log's: the history it saw is not this one. FailedPrecondition for its other refusals
  // (403, 404, 400), Unavailable when it could not be reached or failed.
  Result<CosignedCheckpoint> Cosign(const std::string& checkpoint, NodeSource& tree);

  const std::optional<CosignedCheckpoint>& newest() const { return newest_; }
  const std::string& witness_name() const { return verifier_.name(); }
  const std::string& url() const { return options_.https.url; }

 private:
  WitnessClient(WitnessClientOptions options, CosignatureVerifier verifier)
      : options_(std::move(options)), verifier_(std::move(verifier)), poster_(options_.https) {}

  WitnessClientOptions options_;
  CosignatureVerifier verifier_;
  HttpsPoster poster_;
  uint64_t witness_size_ = 0;  // what the witness holds, as far as this client knows
  std::optional<CosignedCheckpoint> newest_;
};

}  // namespace gpufed::audit
