#include "controller/audit/signing.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <vector>

#include "controller/common/secure_file.h"
#include "controller/common/sha256.h"

namespace gpufed::audit {
namespace {

EVP_PKEY* Raw(const PkeyPtr& p) { return static_cast<EVP_PKEY*>(p.get()); }

std::string RawPublicKey(EVP_PKEY* key) {
  unsigned char raw[32];
  size_t len = sizeof raw;
  if (EVP_PKEY_get_raw_public_key(key, raw, &len) != 1) return "";
  return std::string(reinterpret_cast<const char*>(raw), len);
}

std::string KeyId(EVP_PKEY* key) {
  std::string raw = RawPublicKey(key);
  return raw.empty() ? "" : Sha256Hex(raw).substr(0, 16);
}

std::string Base64(const unsigned char* data, size_t len) {
  std::string out(4 * ((len + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(len));
  out.resize(static_cast<size_t>(n));
  return out;
}

bool Unbase64(std::string_view in, std::vector<unsigned char>* out) {
  if (in.empty() || in.size() % 4 != 0) return false;
  out->assign(in.size() / 4 * 3, 0);
  int n = EVP_DecodeBlock(out->data(), reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  if (n < 0) return false;
  size_t pad = (in.back() == '=') + (in.size() > 1 && in[in.size() - 2] == '=');
  out->resize(static_cast<size_t>(n) - pad);
  return true;
}

std::string PemFromBio(BIO* bio) {
  char* data = nullptr;
  long len = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(len));
}

bool IsEd25519(EVP_PKEY* key) { return EVP_PKEY_get_id(key) == EVP_PKEY_ED25519; }

}  // namespace

void PkeyDeleter::operator()(void* pkey) const { EVP_PKEY_free(static_cast<EVP_PKEY*>(pkey)); }

std::string CheckpointMessage(uint64_t seq, std::string_view hash_hex) {
  return "gpufed-audit-checkpoint/v1\n" + std::to_string(seq) + "\n" + std::string(hash_hex);
}

Signer::Signer(PkeyPtr key) : key_(std::move(key)), key_id_(KeyId(Raw(key_))) {}

Result<Signer> Signer::Generate() {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  if (key == nullptr) return Internal("Ed25519 key generation failed");
  return Signer(PkeyPtr(key));
}

Result<Signer> Signer::FromPrivateKeyPem(std::string_view pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (key == nullptr) return InvalidArgument("not a PEM private key");
  PkeyPtr owned(key);
  if (!IsEd25519(key)) return InvalidArgument("the signing key must be Ed25519 (gpufed audit keygen)");
  return Signer(std::move(owned));
}

Result<Signer> Signer::FromPrivateKeyFile(const std::string& path) {
  Result<std::string> pem = ReadSecretFile(path);
  if (!pem.ok()) return pem.status();
  Result<Signer> signer = FromPrivateKeyPem(*pem);
  if (!signer.ok()) return Status(signer.status().code(), path + ": " + signer.status().message());
  return signer;
}

std::string Signer::Sign(std::string_view message) const {
  std::string sig = SignRaw(message);
  return sig.empty() ? sig : Base64(reinterpret_cast<const unsigned char*>(sig.data()), sig.size());
}

std::string Signer::SignRaw(std::string_view message) const {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  unsigned char sig[64];
  size_t len = sizeof sig;
  bool ok = EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, Raw(key_)) == 1 &&
            EVP_DigestSign(ctx, sig, &len, reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok ? std::string(reinterpret_cast<const char*>(sig), len) : std::string();
}

std::string Signer::PublicKeyRaw() const { return RawPublicKey(Raw(key_)); }

std::string Signer::PrivateKeyPem() const {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, Raw(key_), nullptr, nullptr, 0, nullptr, nullptr);
  std::string pem = PemFromBio(bio);
  BIO_free(bio);
  return pem;
}

std::string Signer::PublicKeyPem() const {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, Raw(key_));
  std::string pem = PemFromBio(bio);
  BIO_free(bio);
  return pem;
}

SignatureVerifier::SignatureVerifier(PkeyPtr key) : key_(std::move(key)), key_id_(KeyId(Raw(key_))) {}

Result<SignatureVerifier> SignatureVerifier::FromPublicKeyPem(std::string_view pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (key == nullptr) return InvalidArgument("not a PEM public key");
  PkeyPtr owned(key);
  if (!IsEd25519(key)) return InvalidArgument("the checkpoint key must be Ed25519");
  return SignatureVerifier(std::move(owned));
}

Result<SignatureVerifier> SignatureVerifier::FromPublicKeyRaw(std::string_view raw) {
  if (raw.size() != 32) return InvalidArgument("an Ed25519 public key is 32 bytes");
  EVP_PKEY* key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                              reinterpret_cast<const unsigned char*>(raw.data()), raw.size());
  if (key == nullptr) return InvalidArgument("not an Ed25519 public key");
  return SignatureVerifier(PkeyPtr(key));
}

bool SignatureVerifier::Verify(std::string_view message, std::string_view signature_base64) const {
  std::vector<unsigned char> sig;
  if (!Unbase64(signature_base64, &sig)) return false;
  return VerifyRaw(message, std::string_view(reinterpret_cast<const char*>(sig.data()), sig.size()));
}

bool SignatureVerifier::VerifyRaw(std::string_view message, std::string_view sig) const {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = EVP_DigestVerifyInit(ctx, nullptr, nullptr, nullptr, Raw(key_)) == 1 &&
            EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
                             reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

std::string SignatureVerifier::PublicKeyRaw() const { return RawPublicKey(Raw(key_)); }

}  // namespace gpufed::audit
