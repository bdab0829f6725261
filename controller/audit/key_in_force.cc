#include "controller/audit/key_in_force.h"

#include "controller/common/base64.h"

namespace gpufed::audit {
namespace {

Status Malformed(const std::string& what) { return InvalidArgument("key-rotated: " + what); }

constexpr const char* kAgain = "gpufed audit rotate-key AUDIT_DIR --new-key FILE, run again with the same keys, ";

std::string Text(const nlohmann::json& record, const char* member) {
  auto it = record.find(member);
  return it != record.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The raw key in `key_member` (base64), checked against the id in `id_member`.
Result<std::string> KeyOf(const nlohmann::json& record, const char* key_member, const char* id_member) {
  Result<std::string> raw = Base64Decode(Text(record, key_member));
  Result<SignatureVerifier> key =
      raw.ok() ? SignatureVerifier::FromPublicKeyRaw(*raw) : Result<SignatureVerifier>(raw.status());
  if (!key.ok() || raw->size() != 32) return Malformed(std::string(key_member) + " is not an Ed25519 public key");
  if (key->key_id() != Text(record, id_member)) {
    return Malformed(std::string(id_member) + " is not the id of " + key_member + " (" + key->key_id() + ")");
  }
  return raw;
}

}  // namespace

AuditRecord KeyRotatedRecord(const Signer& old_key, const Signer& new_key, const std::string& origin,
                             const std::string& operator_name, const std::string& reason) {
  nlohmann::json payload = {{"newKey", Base64Encode(new_key.PublicKeyRaw())},
                            {"newKeyId", new_key.key_id()},
                            {"newVkey", FormatVerifierKey(origin, new_key.PublicKeyRaw())},
                            {"oldKey", Base64Encode(old_key.PublicKeyRaw())},
                            {"oldKeyId", old_key.key_id()},
                            {"operator", operator_name}};
  if (!reason.empty()) payload["reason"] = reason;
  return {RecordKind::kKeyRotated, std::move(payload)};
}

Result<KeyRotation> ParseKeyRotation(const nlohmann::json& record, const std::string& origin) {
  if (!record.is_object()) return Malformed("not an object");
  KeyRotation out;
  auto seq = record.find("seq");
  if (seq != record.end() && seq->is_number_unsigned()) out.seq = seq->get<uint64_t>();
  Result<std::string> old_key = KeyOf(record, "oldKey", "oldKeyId");
  if (!old_key.ok()) return old_key.status();
  Result<std::string> new_key = KeyOf(record, "newKey", "newKeyId");
  if (!new_key.ok()) return new_key.status();
  out.old_key = std::move(*old_key);
  out.new_key = std::move(*new_key);
  out.old_key_id = Text(record, "oldKeyId");
  out.new_key_id = Text(record, "newKeyId");
  if (out.old_key == out.new_key) return Malformed("the new key is the old key");
  // The verifier key a transparency-log verifier will be given: it must be this key's, of
  // this log.
  out.new_vkey = Text(record, "newVkey");
  const std::string name = out.new_vkey.substr(0, out.new_vkey.find('+'));
  if (!ValidNoteKeyName(name) || out.new_vkey != FormatVerifierKey(name, out.new_key)) {
    return Malformed("newVkey is not the verifier key of newKey");
  }
  if (!origin.empty() && name != origin) return Malformed("newVkey names log '" + name + "', not '" + origin + "'");
  out.operator_name = Text(record, "operator");
  out.reason = Text(record, "reason");
  return out;
}

Result<KeyInForce> KeyInForce::Create(std::string_view first_key) {
  Result<SignatureVerifier> key = SignatureVerifier::FromPublicKeyRaw(first_key);
  if (!key.ok()) return key.status();
  return KeyInForce(std::move(*key));
}

Result<const NoteVerifier*> KeyInForce::NoteKey(const std::string& origin) {
  if (!note_key_ || note_key_->name() != origin) {
    note_key_.reset();
    Result<NoteVerifier> verifier = NoteVerifier::FromPublicKey(origin, *key_);
    if (!verifier.ok()) return verifier.status();
    note_key_.emplace(std::move(*verifier));
  }
  return &*note_key_;
}

Status KeyInForce::Rotate(KeyRotation rotation) {
  const std::string at = "the key-rotated record at seq " + std::to_string(rotation.seq);
  if (pending_) {
    return FailedPrecondition(at + " follows the one at seq " + std::to_string(pending_->seq) +
                              " before any checkpoint signed that one");
  }
  if (rotation.old_key_id != key_->key_id() || rotation.old_key != key_->PublicKeyRaw()) {
    return FailedPrecondition(at + " hands over from key " + rotation.old_key_id + ", but the key in force is " +
                              key_->key_id());
  }
  pending_.emplace(std::move(rotation));
  return Status::Ok();
}

const KeyRotation* KeyInForce::Signed() {
  if (!pending_) {
    if (last_) new_key_signed_ = true;
    return nullptr;
  }
  Result<SignatureVerifier> next = SignatureVerifier::FromPublicKeyRaw(pending_->new_key);
  if (!next.ok()) return nullptr;  // ParseKeyRotation checked it
  key_.emplace(std::move(*next));
  note_key_.reset();
  last_ = std::move(pending_);
  pending_.reset();
  new_key_signed_ = false;
  return &*last_;
}

Status RefuseCheckpointKey(uint64_t seq, const std::string& key_id, const KeyInForce& keys,
                           const std::string& this_key_id, const KeyRotation* torn) {
  const std::string at = "checkpoint seq " + std::to_string(seq);
  const KeyRotation* pending = keys.pending();
  if (pending != nullptr && pending->new_key_id == key_id) {
    return FailedPrecondition(at + ", the first after the key-rotated record at seq " + std::to_string(pending->seq) +
                              ", is signed by its new key " + key_id + ": the key it hands over from (" +
                              keys.key().key_id() + ") must sign it first; nothing was changed");
  }
  if (torn != nullptr && torn->new_key_id == this_key_id && torn->old_key_id == key_id) {
    return FailedPrecondition("the key-rotated record at seq " + std::to_string(torn->seq) + " (from key " + key_id +
                              " to this controller's key " + this_key_id +
                              ") was never signed: a crash cut the rotation short. Start with key " + key_id +
                              " (that start cuts the record off), then " + kAgain + "rotates; nothing was changed");
  }
  if (keys.last() == nullptr && pending == nullptr && keys.key().key_id() == this_key_id) {
    return FailedPrecondition(at + " is signed by key " + key_id + ", not by this controller's key " + this_key_id +
                              " (a key change is an explicit, journalled rotation: gpufed audit rotate-key; after "
                              "one, start with the key in force); nothing was changed");
  }
  return FailedPrecondition(at + " is signed by key " + key_id + ", not by the key in force " + keys.key().key_id() +
                            " and no key-rotated record hands over to it; nothing was changed");
}

Status CheckKeyAtHead(const KeyInForce& keys, const std::string& this_key_id, const std::string& rotation_from_key_id) {
  const KeyRotation* last = keys.last();
  if (last != nullptr && !keys.new_key_signed() &&
      (rotation_from_key_id != last->old_key_id || last->new_key_id != this_key_id)) {
    return FailedPrecondition("the rotation from key " + last->old_key_id + " to key " + last->new_key_id + " at seq " +
                              std::to_string(last->seq) +
                              " is not complete: the old key signed it, the new key has signed nothing yet (a crash "
                              "inside gpufed audit rotate-key): " +
                              kAgain + "completes it; nothing was changed");
  }
  if (keys.key().key_id() != this_key_id) {
    std::string since = last == nullptr ? "" : " since the key-rotated record at seq " + std::to_string(last->seq);
    return FailedPrecondition("the journal's key in force is " + keys.key().key_id() + since +
                              " (gpufed audit rotate-key), not this controller's key " + this_key_id +
                              ": start with the key in force (" + kAgain +
                              "finishes a rotation whose signing.pub or signing.key is not yet the new key's); "
                              "nothing was changed");
  }
  return Status::Ok();
}

}  // namespace gpufed::audit
