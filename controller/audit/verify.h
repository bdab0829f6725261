#pragma once
// Verification of a journal folder or of a receiver's copy (a syslog file whose lines
// carry a prefix before the JSON record, or an HTTPS receiver's JSON lines).
//
// Checks, in order of the lines: every record's own hash (a changed byte), the chain
// (each prev is the previous record's hash), sequence numbers (no gap: a deleted record;
// no going back: a reordered or duplicated record) and, given the public key, every
// checkpoint's Ed25519 signature. A receiver's copy may hold identical duplicates
// (at-least-once delivery) and unrelated lines; a journal folder may not.
#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "controller/audit/env.h"
#include "controller/audit/key_in_force.h"
#include "controller/audit/merkle.h"
#include "controller/audit/record.h"
#include "controller/audit/signed_note.h"
#include "controller/audit/signing.h"
#include "controller/common/status.h"

namespace gpufed::audit {

struct VerifyOptions {
  // The key in force at the journal's first checkpoint (its original key); null:
  // signatures are not checked. From it, verification follows the journal's key-rotated
  // records (key_in_force.h): each checkpoint must be signed by the key in force there,
  // the first key or a key that a rotation signed by the key before it handed over to.
  const SignatureVerifier* key = nullptr;
  bool receiver_copy = false;
  // More keys pin the rotations: each key-rotated record must hand over to one of `key`
  // and these (a rotation to any other key fails). They are never accepted where a
  // rotation did not put them in force. Without `key`, the first of them is the first key.
  std::vector<const SignatureVerifier*> more_keys;
  // Journal folders only: the seq of the first record, above 1 for a journal whose older
  // segments were archived (archive.h). Its first record's prev is then taken as given
  // (VerifyReport::first_prev; it is checked only against the archive), and the Merkle
  // tree is picked up at its first v2 checkpoint from that checkpoint's frontier, whose
  // root the signed note must match.
  uint64_t first_seq = 1;
};

struct VerifyReport {
  bool ok = true;
  uint64_t first_seq = 1;   // above 1: the journal begins there (options.first_seq)
  std::string first_prev;   // then: its first record's prev, the archived record's hash
  uint64_t records = 0;               // distinct records, checkpoints included
  uint64_t checkpoints = 0;
  uint64_t signatures_verified = 0;
  uint64_t duplicates = 0;            // identical re-deliveries (receiver copies only)
  uint64_t foreign_lines = 0;         // lines without a record (receiver copies only)
  uint64_t torn_fragments = 0;        // partial lines the receiver cut (receiver copies)
  uint64_t last_seq = 0;
  uint64_t last_signed_seq = 0;       // records after it carry no signature yet
  uint64_t last_checkpoint_seq = 0;   // the last checkpoint record (0: none)
  // The Merkle tree (RFC 9162) of every record read, and the log's origin from its
  // signed checkpoints (empty for a journal of v1 checkpoints only).
  uint64_t tree_size = 0;
  std::string root_hash;  // hex
  std::string log_origin;
  // Torn commits cut off at a start (journal-repaired records): what was cut and where.
  struct Repair {
    uint64_t seq = 0;        // the journal-repaired record
    uint64_t after_seq = 0;  // the cut followed this record
    uint64_t bytes = 0;
    uint64_t dropped_from = 0, dropped_to = 0;  // complete records cut (0: a partial line only)
    std::string quarantine;
  };
  std::vector<Repair> repairs;
  // Key rotations (key-rotated records), in order. With a key, each was signed by the key
  // in force; without one, this is what the records and checkpoints claim.
  struct Rotation {
    uint64_t seq = 0;  // the key-rotated record
    std::string old_key_id, new_key_id;
    uint64_t old_key_signed = 0;  // the checkpoint after it (the old key's); 0: none yet
    uint64_t new_key_signed = 0;  // the new key's first checkpoint; 0: none yet
    std::string operator_name, reason;
  };
  std::vector<Rotation> rotations;
  // Given keys (ids) that no rotation put in force; with a key only.
  std::vector<std::string> keys_never_in_force;
  // The newest signed-note checkpoint: its key id and note (what the API serves).
  std::string last_note_key_id;
  std::string last_note;
  // A controller's journal (it holds controller-start) whose last records are not the
  // controller-stop and final checkpoint `gpufed run` writes when it stops: the
  // controller is running or crashed, or records after the last checkpoint were cut.
  bool unclosed = false;
  // When !ok: the first sequence number whose integrity fails, the line it was found
  // on (1-based) and why.
  uint64_t first_bad_seq = 0;
  uint64_t line_number = 0;
  std::string error;
};

// Feeds lines one at a time; stops checking at the first problem.
class ChainVerifier {
 public:
  explicit ChainVerifier(const VerifyOptions& options);
  // Returns false once a problem has been found.
  bool AddLine(std::string_view line);
  VerifyReport Finish();

 private:
  bool Fail(uint64_t seq, std::string message);
  bool CheckCheckpoint(uint64_t seq, std::string_view line, const std::string& prev);
  bool CheckMerkle(uint64_t seq, const nlohmann::json& record);
  // The key in force when it has this id; null (and Fail) when it has another
  // (verify_keys.cc, as are the other key methods).
  const SignatureVerifier* KeyFor(uint64_t seq, const std::string& key_id);
  bool checking_signatures() const { return options_.key != nullptr || !options_.more_keys.empty(); }
  void NoteRepair(uint64_t seq, std::string_view line);
  void InitKeys();
  // A key-rotated record: reported, and with a key checked against the key in force.
  bool NoteRotation(uint64_t seq, std::string_view line);
  // A checkpoint of `key_id` that passed its checks: a pending rotation takes effect.
  void NoteCheckpoint(uint64_t seq, const std::string& key_id);
  // Whether the journal is closed after a record of `kind` (controller-stop, its
  // checkpoint, then only key rotations, repairs and their checkpoints).
  void TrackClose(const std::string& kind);

  VerifyOptions options_;
  VerifyReport report_;
  std::string last_hash_;
  bool tree_known_ = true;  // false until a journal that begins after seq 1 meets a v2 checkpoint
  bool controller_journal_ = false;  // saw controller-start
  std::string last_kind_;
  std::vector<std::array<unsigned char, 32>> hashes_;  // receiver copies: by seq - 1
  LineHasher hasher_;
  CompactRange range_;
  MerkleHasher merkle_hasher_;
  std::optional<KeyInForce> keys_;       // with a key
  std::set<std::string> ids_in_force_;   // every key that was in force
  bool closed_ = false, only_rotations_ = false;
  size_t awaiting_old_ = 0, awaiting_new_ = 0;  // 1 + index in report_.rotations; 0: none
};

// `audit_dir` holds `journal/`. NotFound if it has no journal. A journal whose first
// segment begins after seq 1 (its older segments archived) is read from there
// (options.first_seq, VerifyReport::first_seq).
Result<VerifyReport> VerifyJournalDir(Env& env, const std::string& audit_dir, const VerifyOptions& options);
// A receiver's file; options.receiver_copy is implied.
Result<VerifyReport> VerifyReceiverFile(Env& env, const std::string& path, VerifyOptions options);

}  // namespace gpufed::audit
