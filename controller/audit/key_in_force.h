#pragma once
// Key rotation inside the journal (docs/audit-format.md, "Key rotation"): the
// `key-rotated` record, by which the key in force hands the journal over to a new key,
// and the bookkeeping of which key must sign each checkpoint. The start
// (journal_recovery.cc) and `gpufed audit verify` (verify.h) share it, so that both hold
// a journal to one rule:
//
//   * the first checkpoint is signed by the first key (the start: the one that the
//     journal's first rotation names as old, or this controller's; verify: the first
//     --key given);
//   * a `key-rotated` record is pending until the next checkpoint, which the key in force
//     (the one it hands over from) must sign: a key cannot authorise itself;
//   * every checkpoint after that one must be signed by the new key.
//
// `gpufed audit rotate-key` (key_rotation.h) writes the record, the old key's checkpoint
// and a checkpoint of the new key over both, so the handover is signed by both keys.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "controller/audit/record.h"
#include "controller/audit/signed_note.h"
#include "controller/audit/signing.h"
#include "controller/common/status.h"

namespace gpufed::audit {

// What a key-rotated record says. Keys are the 32 raw bytes of Ed25519 public keys; key
// ids are gpufed's (the first 16 hex digits of SHA-256 of the raw key).
struct KeyRotation {
  uint64_t seq = 0;  // the record's
  std::string old_key_id, old_key;
  std::string new_key_id, new_key;
  std::string new_vkey;       // the new key's signed-note verifier key under the log's origin
  std::string operator_name;  // who ran the rotation (the local user)
  std::string reason;         // why, when given
};

// The record by which `old_key` hands the journal of log `origin` to `new_key`. Its
// payload: newKey, newKeyId, newVkey, oldKey, oldKeyId, operator, reason (when not empty).
AuditRecord KeyRotatedRecord(const Signer& old_key, const Signer& new_key, const std::string& origin,
                             const std::string& operator_name, const std::string& reason);

// Reads a key-rotated record (the whole record, RecordJson) and checks it in itself: both
// keys are Ed25519 keys of their ids, they differ, and the verifier key is the new key's
// (under `origin` when it is not empty). InvalidArgument naming the member. Whether the
// key in force signed it is the caller's question (KeyInForce).
Result<KeyRotation> ParseKeyRotation(const nlohmann::json& record, const std::string& origin);

// Which key must sign the next checkpoint of a journal read in order.
class KeyInForce {
 public:
  // `first_key`: the raw public key in force at the first checkpoint the caller checks.
  // InvalidArgument when it is not an Ed25519 key.
  static Result<KeyInForce> Create(std::string_view first_key);

  // The key in force.
  const SignatureVerifier& key() const { return *key_; }
  // key() as the signed-note verifier of log `origin` (made once per key and origin).
  Result<const NoteVerifier*> NoteKey(const std::string& origin);

  // A key-rotated record, pending until the next checkpoint. FailedPrecondition when it
  // hands over from a key that is not the key in force, or while another rotation is
  // pending (two records before one checkpoint).
  Status Rotate(KeyRotation rotation);
  // The key in force signed the next checkpoint (the caller checked it): a pending
  // rotation takes effect, and is returned; null when none was pending.
  const KeyRotation* Signed();

  // A key-rotated record the key in force has not signed yet; null when none.
  const KeyRotation* pending() const { return pending_ ? &*pending_ : nullptr; }
  // The last rotation that took effect; null when none.
  const KeyRotation* last() const { return last_ ? &*last_ : nullptr; }
  // Whether last()'s new key has signed a checkpoint since (the handover's second
  // signature); true when no rotation took effect.
  bool new_key_signed() const { return new_key_signed_; }

 private:
  explicit KeyInForce(SignatureVerifier key) : key_(std::move(key)) {}

  std::optional<SignatureVerifier> key_;
  std::optional<NoteVerifier> note_key_;
  std::optional<KeyRotation> pending_, last_;
  bool new_key_signed_ = true;
};

// What a start refuses (journal_recovery.cc), beside the rule it enforces. Each is
// FailedPrecondition saying what to do, and "nothing was changed" (a refused open writes
// nothing). `this_key_id`: the key the controller starts with.
//
// A checkpoint at `seq` signed by `key_id`, not by the key in force. `torn`: a key-rotated
// record that no checkpoint follows (a rotation a crash cut short), or null.
Status RefuseCheckpointKey(uint64_t seq, const std::string& key_id, const KeyInForce& keys,
                           const std::string& this_key_id, const KeyRotation* torn);
// After the last checkpoint: the key in force must be `this_key_id`, and a rotation to it
// must be signed by it too, unless rotate-key opens the journal to write that signature
// (`rotation_from_key_id`: its old key, JournalOptions::rotation_from; empty otherwise).
Status CheckKeyAtHead(const KeyInForce& keys, const std::string& this_key_id, const std::string& rotation_from_key_id);

}  // namespace gpufed::audit
