#pragma once
// Ed25519 keys for signed checkpoints (OpenSSL EVP). The private key stays with the
// controller; the public key is all a verifier needs.
#include <memory>
#include <string>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed::audit {

struct PkeyDeleter {
  void operator()(void* pkey) const;
};
using PkeyPtr = std::unique_ptr<void, PkeyDeleter>;  // an EVP_PKEY*

// The message a checkpoint signs: the chain head it covers.
std::string CheckpointMessage(uint64_t seq, std::string_view hash_hex);

// Holds a private key. Thread-safe for Sign.
class Signer {
 public:
  static Result<Signer> Generate();
  // PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"). InvalidArgument if not an Ed25519 key.
  static Result<Signer> FromPrivateKeyPem(std::string_view pem);
  // Reads the PEM from a private key file, which must be private (common/secure_file.h
  // ReadSecretFile): FailedPrecondition, naming the path and the fix, for a symlink, a
  // file owned by another user or one group or others can read or write; NotFound when
  // missing. Errors from the PEM name the path.
  static Result<Signer> FromPrivateKeyFile(const std::string& path);

  // Base64 signature over `message`.
  std::string Sign(std::string_view message) const;
  // The 64 signature bytes over `message` (signed notes carry them raw).
  std::string SignRaw(std::string_view message) const;
  // The 32 bytes of the public key (RFC 8032), as signed-note key ids hash them.
  std::string PublicKeyRaw() const;
  std::string PrivateKeyPem() const;
  std::string PublicKeyPem() const;
  // First 16 hex digits of SHA-256 over the raw 32-byte public key.
  const std::string& key_id() const { return key_id_; }

 private:
  explicit Signer(PkeyPtr key);
  PkeyPtr key_;
  std::string key_id_;
};

// Holds a public key. Thread-safe.
class SignatureVerifier {
 public:
  // SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----").
  static Result<SignatureVerifier> FromPublicKeyPem(std::string_view pem);
  // The 32 raw bytes of an Ed25519 public key (a signed-note verifier key carries them).
  static Result<SignatureVerifier> FromPublicKeyRaw(std::string_view raw);

  bool Verify(std::string_view message, std::string_view signature_base64) const;
  bool VerifyRaw(std::string_view message, std::string_view signature) const;
  std::string PublicKeyRaw() const;
  const std::string& key_id() const { return key_id_; }

 private:
  explicit SignatureVerifier(PkeyPtr key);
  PkeyPtr key_;
  std::string key_id_;
};

}  // namespace gpufed::audit
