#pragma once
// Witness cosignatures (c2sp.org/tlog-cosignature, cosignature/v1): a witness that checked
// a checkpoint's consistency with the last one it cosigned signs, with Ed25519,
//
//   "cosignature/v1\ntime <T>\n" || checkpoint body
//
// where T is its clock in seconds since the epoch. The signature travels as an ordinary
// signed-note line whose bytes are key id (4) || T as uint64 big-endian (8) || signature
// (64); the key id is SHA-256(name || '\n' || 0x04 || public key)[:4], so a log verifier
// that does not know the witness skips the line.
#include <cstdint>
#include <string>
#include <string_view>

#include "controller/audit/signed_note.h"
#include "controller/audit/signing.h"
#include "controller/common/status.h"

namespace gpufed::audit {

// The bytes a witness signs for `body` at `timestamp`.
std::string CosignedMessage(std::string_view body, uint64_t timestamp);

class CosignatureSigner {
 public:
  // InvalidArgument for a name signed-note does not allow. `signer` must outlive this.
  static Result<CosignatureSigner> Create(std::string name, const Signer* signer);
  NoteSignature Sign(std::string_view body, uint64_t timestamp) const;
  const std::string& name() const { return name_; }
  // `<name>+<id>+<base64(0x04 || key)>`, what a log operator and an auditor configure.
  std::string VerifierKey() const;

 private:
  CosignatureSigner(std::string name, const Signer* signer, uint32_t key_id)
      : name_(std::move(name)), signer_(signer), key_id_(key_id) {}
  std::string name_;
  const Signer* signer_;
  uint32_t key_id_;
};

class CosignatureVerifier {
 public:
  // A witness's verifier key (type 0x04); InvalidArgument naming the part that is wrong.
  static Result<CosignatureVerifier> FromVerifierKey(std::string_view vkey);
  // The time of this witness's cosignature on `note`: NotFound when the note has no line of
  // this witness's name and key id, DataLoss when its line does not verify.
  Result<uint64_t> Verify(const Note& note) const;
  const std::string& name() const { return name_; }
  uint32_t key_id() const { return key_id_; }
  std::string VerifierKey() const;

 private:
  CosignatureVerifier(std::string name, SignatureVerifier key, uint32_t key_id)
      : name_(std::move(name)), key_(std::move(key)), key_id_(key_id) {}
  std::string name_;
  SignatureVerifier key_;
  uint32_t key_id_;
};

}  // namespace gpufed::audit
