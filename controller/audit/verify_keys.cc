// ChainVerifier's keys (verify.h): which key must sign each checkpoint, from the first key
// given and the journal's key-rotated records (key_in_force.h), and what the report says
// of each rotation. Kept apart from verify.cc, which checks the chain itself.
#include "controller/audit/verify.h"

namespace gpufed::audit {

void ChainVerifier::InitKeys() {
  const SignatureVerifier* first = options_.key;
  if (first == nullptr && !options_.more_keys.empty()) first = options_.more_keys.front();
  if (first == nullptr) return;
  Result<KeyInForce> keys = KeyInForce::Create(first->PublicKeyRaw());
  if (!keys.ok()) {
    Fail(1, "the given key: " + keys.status().message());
    return;
  }
  keys_.emplace(std::move(*keys));
  ids_in_force_.insert(first->key_id());
}

const SignatureVerifier* ChainVerifier::KeyFor(uint64_t seq, const std::string& key_id) {
  const SignatureVerifier& in_force = keys_->key();
  if (in_force.key_id() == key_id) return &in_force;
  const std::string at =
      "checkpoint seq " + std::to_string(seq) + " is signed by key " + (key_id.empty() ? "?" : key_id);
  const KeyRotation* pending = keys_->pending();
  const KeyRotation* last = keys_->last();
  if (pending != nullptr && pending->new_key_id == key_id) {
    Fail(seq, at + ", the new key of the key-rotated record at seq " + std::to_string(pending->seq) +
                  ": a rotation must first be signed by the key it hands over from, " + in_force.key_id());
  } else if (last == nullptr) {
    Fail(seq, at + ", not by the key in force " + in_force.key_id() +
                  " (the first --key, which must be the journal's original key: verify follows each key-rotated "
                  "record from it)");
  } else {
    Fail(seq, at + ", not by the key in force " + in_force.key_id() + " (since the key-rotated record at seq " +
                  std::to_string(last->seq) + "), and no key-rotated record it signed hands over to that key");
  }
  return nullptr;
}

bool ChainVerifier::NoteRotation(uint64_t seq, std::string_view line) {
  Result<nlohmann::json> json = RecordJson(line);
  Result<KeyRotation> rotation =
      json.ok() ? ParseKeyRotation(*json, report_.log_origin) : Result<KeyRotation>(json.status());
  if (!rotation.ok()) return Fail(seq, "seq " + std::to_string(seq) + ": " + rotation.status().message());
  rotation->seq = seq;
  report_.rotations.push_back(
      {seq, rotation->old_key_id, rotation->new_key_id, 0, 0, rotation->operator_name, rotation->reason});
  awaiting_old_ = report_.rotations.size();
  if (!keys_) return true;
  if (!options_.more_keys.empty()) {
    bool given = options_.key != nullptr && options_.key->PublicKeyRaw() == rotation->new_key;
    for (const SignatureVerifier* key : options_.more_keys) given = given || key->PublicKeyRaw() == rotation->new_key;
    if (!given) {
      return Fail(seq, "the key-rotated record at seq " + std::to_string(seq) + " hands over to key " +
                           rotation->new_key_id + ", which is none of the keys given (with more than one --key, " +
                           "each rotation must hand over to one of them)");
    }
  }
  Status rotated = keys_->Rotate(std::move(*rotation));
  if (!rotated.ok()) return Fail(seq, rotated.message());
  return true;
}

void ChainVerifier::NoteCheckpoint(uint64_t seq, const std::string& key_id) {
  if (awaiting_old_ != 0) {
    VerifyReport::Rotation& rotation = report_.rotations[awaiting_old_ - 1];
    if (key_id == rotation.old_key_id) rotation.old_key_signed = seq;
    awaiting_new_ = awaiting_old_;
    awaiting_old_ = 0;
  } else if (awaiting_new_ != 0 && report_.rotations[awaiting_new_ - 1].new_key_id == key_id) {
    report_.rotations[awaiting_new_ - 1].new_key_signed = seq;
    awaiting_new_ = 0;
  }
  if (keys_ && keys_->Signed() != nullptr) ids_in_force_.insert(keys_->key().key_id());
}

void ChainVerifier::TrackClose(const std::string& kind) {
  if (kind == "checkpoint") {
    closed_ = last_kind_ == "controller-stop" || (closed_ && only_rotations_);
    only_rotations_ = true;
  } else {
    only_rotations_ = only_rotations_ && (kind == "key-rotated" || kind == "journal-repaired");
  }
}

}  // namespace gpufed::audit
