#pragma once
// Inclusion and consistency proofs over a journal, a folder or another storage (`gpufed
// audit prove [--store]`) and their
// offline check (`gpufed audit verify-proof`), which needs only the log's public key, the
// proof and a checkpoint. The JSON forms are in docs/audit-format.md ("Proofs"):
//   {"type":"inclusion","seq","leafIndex","treeSize","record","proof":[b64],"checkpoint"}
//   {"type":"consistency","fromSize","toSize","fromRoot","toRoot","proof":[b64],"checkpoint"}
// "checkpoint" is a signed note of the proof's (larger) tree size, when the journal has one.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "controller/audit/env.h"
#include "controller/audit/journal_storage.h"
#include "controller/audit/merkle.h"
#include "controller/audit/signed_note.h"
#include "controller/common/status.h"

namespace gpufed::audit {

// A journal's tree, read once: the leaf hash of every record and its signed checkpoints.
class JournalProver {
 public:
  // Reads every record of `audit_dir`; DataLoss when the chain or a checkpoint's tree does
  // not hold (run `gpufed audit verify`).
  static Result<JournalProver> Load(Env& env, const std::string& audit_dir);
  // The same over a journal kept elsewhere (the PostgreSQL table): `for_each_line` calls
  // its argument with every stored line from seq 1 in order, and `open_source` reads
  // single records back for the proofs.
  using LineScan = std::function<Status(const std::function<Status(std::string_view)>&)>;
  static Result<JournalProver> LoadLines(const LineScan& for_each_line, JournalSourceFactory open_source);

  // The proof of record `seq` in the tree of `tree_size` records (0: the newest signed
  // checkpoint's size, which must cover seq). With `checkpoint_note` (an auditor's own
  // checkpoint), its size is used and its root must be this journal's at that size.
  Result<nlohmann::json> Inclusion(uint64_t seq, uint64_t tree_size, const std::string& checkpoint_note);
  Result<nlohmann::json> Consistency(uint64_t from_size, uint64_t to_size);
  uint64_t size() const { return source_->size(); }
  // The root of the first `size` records; NotFound past the journal's end.
  Result<MerkleHash> Root(uint64_t size);

 private:
  explicit JournalProver(JournalSourceFactory open_source) : open_source_(std::move(open_source)) {}
  Result<std::string> RecordLine(uint64_t seq);

  JournalSourceFactory open_source_;
  std::unique_ptr<MemoryNodeSource> source_;
  std::map<uint64_t, std::string> notes_;  // tree size -> signed note
  MerkleHasher hasher_;
};

// How a proof's checkpoints are trusted: a verifier key, or a PEM public key whose name is
// the checkpoint's origin.
struct ProofKey {
  std::optional<NoteVerifier> vkey;
  const SignatureVerifier* pem = nullptr;
};

struct ProofCheck {
  std::string summary;  // what was proven, for the OK line
};
// Checks a proof offline. `checkpoint_note` (optional) replaces the proof's own
// checkpoint; `old_note` (consistency only, optional) must sign fromSize and fromRoot.
// DataLoss naming what fails; InvalidArgument for a malformed proof.
Result<ProofCheck> VerifyProof(const nlohmann::json& proof, const ProofKey& key, const std::string& checkpoint_note,
                               const std::string& old_note);

}  // namespace gpufed::audit
