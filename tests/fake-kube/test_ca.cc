#include "tests/fake-kube/test_ca.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>

namespace gpufed::testing {
namespace {

struct Deleter {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Deleter>;
using Cert = std::unique_ptr<X509, Deleter>;

std::string BioText(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string KeyPem(EVP_PKEY* key) {
  std::unique_ptr<BIO, Deleter> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  return BioText(bio.get());
}

std::string CertPem(X509* cert) {
  std::unique_ptr<BIO, Deleter> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  return BioText(bio.get());
}

bool AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// Signs a certificate for `key` named `cn`; self-signed when `issuer` is null.
Cert Issue(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key, long serial, bool ca,
           const char* san, const char* eku) {
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509* signer = issuer ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  bool ok = AddExt(cert.get(), signer, NID_basic_constraints, ca ? "critical,CA:TRUE" : "critical,CA:FALSE") &&
            AddExt(cert.get(), signer, NID_key_usage, ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature") &&
            AddExt(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (ok && san) ok = AddExt(cert.get(), signer, NID_subject_alt_name, san);
  if (ok && eku) ok = AddExt(cert.get(), signer, NID_ext_key_usage, eku);
  if (!ok || X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) == 0) return nullptr;
  return cert;
}

}  // namespace

Result<TestCa> GenerateTestCa(const std::string& client_cn) {
  Key ca_key(EVP_EC_gen("P-256"));
  Key server_key(EVP_EC_gen("P-256"));
  Key client_key(EVP_EC_gen("P-256"));
  if (!ca_key || !server_key || !client_key) return Internal("EC key generation failed");
  // A unique CA name per run: two test CAs must never look like the same issuer.
  unsigned char nonce[8];
  RAND_bytes(nonce, sizeof nonce);
  char hex[17];
  for (int i = 0; i < 8; ++i) std::snprintf(hex + 2 * i, 3, "%02x", nonce[i]);
  Cert ca = Issue(ca_key.get(), std::string("gpufed test CA ") + hex, nullptr, nullptr, 1, true, nullptr, nullptr);
  if (!ca) return Internal("CA certificate failed");
  Cert server = Issue(server_key.get(), "127.0.0.1", ca.get(), ca_key.get(), 2, false,
                      "IP:127.0.0.1,DNS:localhost", "serverAuth");
  Cert client = Issue(client_key.get(), client_cn, ca.get(), ca_key.get(), 3, false, nullptr, "clientAuth");
  if (!server || !client) return Internal("leaf certificate failed");
  TestCa out;
  out.ca_pem = CertPem(ca.get());
  out.server_cert_pem = CertPem(server.get());
  out.server_key_pem = KeyPem(server_key.get());
  out.client_cert_pem = CertPem(client.get());
  out.client_key_pem = KeyPem(client_key.get());
  out.client_common_name = client_cn;
  return out;
}

}  // namespace gpufed::testing
