#include "controller/audit/cosignature.h"

namespace gpufed::audit {
namespace {

constexpr size_t kTimestampBytes = 8;
constexpr size_t kEd25519SignatureBytes = 64;

std::string BigEndian64(uint64_t v) {
  std::string out(kTimestampBytes, '\0');
  for (size_t i = 0; i < kTimestampBytes; ++i) out[kTimestampBytes - 1 - i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

uint64_t ReadBigEndian64(std::string_view bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < kTimestampBytes; ++i) v = (v << 8) | static_cast<unsigned char>(bytes[i]);
  return v;
}

}  // namespace

std::string CosignedMessage(std::string_view body, uint64_t timestamp) {
  std::string message = "cosignature/v1\ntime " + std::to_string(timestamp) + "\n";
  message += body;
  return message;
}

Result<CosignatureSigner> CosignatureSigner::Create(std::string name, const Signer* signer) {
  if (!ValidNoteKeyName(name)) {
    return InvalidArgument("witness name '" + name +
                           "' must be non-empty, without spaces or '+' (a signed-note key name)");
  }
  const uint32_t id = NoteKeyId(name, kNoteCosignature, signer->PublicKeyRaw());
  return CosignatureSigner(std::move(name), signer, id);
}

NoteSignature CosignatureSigner::Sign(std::string_view body, uint64_t timestamp) const {
  return {name_, key_id_, BigEndian64(timestamp) + signer_->SignRaw(CosignedMessage(body, timestamp))};
}

std::string CosignatureSigner::VerifierKey() const {
  return FormatVerifierKey(name_, signer_->PublicKeyRaw(), kNoteCosignature);
}

Result<CosignatureVerifier> CosignatureVerifier::FromVerifierKey(std::string_view vkey) {
  Result<ParsedVerifierKey> parsed = ParseVerifierKey(vkey, kNoteCosignature);
  if (!parsed.ok()) return parsed.status();
  Result<SignatureVerifier> key = SignatureVerifier::FromPublicKeyRaw(parsed->public_key);
  if (!key.ok()) return InvalidArgument("witness verifier key: " + key.status().message());
  return CosignatureVerifier(std::move(parsed->name), std::move(*key), parsed->key_id);
}

Result<uint64_t> CosignatureVerifier::Verify(const Note& note) const {
  for (const NoteSignature& sig : note.signatures) {
    if (sig.name != name_ || sig.key_id != key_id_) continue;
    if (sig.signature.size() != kTimestampBytes + kEd25519SignatureBytes) {
      return Status(StatusCode::kDataLoss, "the cosignature of " + name_ + " is not 72 bytes");
    }
    const uint64_t timestamp = ReadBigEndian64(sig.signature);
    if (!key_.VerifyRaw(CosignedMessage(note.body, timestamp),
                        std::string_view(sig.signature).substr(kTimestampBytes))) {
      return Status(StatusCode::kDataLoss, "the cosignature of " + name_ + " does not verify");
    }
    return timestamp;
  }
  return NotFound("no cosignature of " + name_ + "+" + NoteKeyIdHex(key_id_));
}

std::string CosignatureVerifier::VerifierKey() const {
  return FormatVerifierKey(name_, key_.PublicKeyRaw(), kNoteCosignature);
}

}  // namespace gpufed::audit
