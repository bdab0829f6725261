#include "controller/server/client_certificate.h"

#include <openssl/asn1.h>
#include <openssl/crypto.h>
#include <openssl/objects.h>

#include <algorithm>
#include <memory>

#include "controller/common/sha256.h"

namespace gpufed::server {
namespace {

// The bytes written as they are; every other byte is %XX. The same set as token names
// (WhyNotAPrincipalName), so a principal never holds a space, a quote, a control byte or
// anything a table, a log line or a query argument could misread.
bool Plain(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '@' || c == ':' || c == '-';
}

bool UpperHex(char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); }

// Appends `bytes` escaped to `out`; false once `out` would pass `limit` (the caller then
// names the subject by its hash, so a 10 KB subject is never escaped whole).
bool AppendEscaped(std::string_view bytes, size_t limit, std::string& out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (Plain(c)) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
    if (out.size() > limit) return false;
  }
  return true;
}

// An attribute type as text: OpenSSL's short name, or the dotted OID of a type it does
// not know (always the OID, never a long name, so one type has one spelling).
std::string TypeName(const ASN1_OBJECT* type) {
  const int nid = OBJ_obj2nid(type);
  if (nid != NID_undef) {
    if (const char* short_name = OBJ_nid2sn(nid); short_name != nullptr) return short_name;
  }
  char oid[128];
  const int n = OBJ_obj2txt(oid, sizeof oid, type, /*no_name=*/1);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof oid) return "";  // "" makes the caller hash
  return std::string(oid, static_cast<size_t>(n));
}

// The readable form ("x509:..."), or "" when the subject must be named by its hash.
std::string ReadablePrincipal(const X509_NAME* subject) {
  const int count = X509_NAME_entry_count(subject);
  if (count <= 0) return "";
  std::string out(kCertificatePrincipalPrefix);
  // Encoded order is most general first (C, O, ..., CN); RFC 4514 writes it reversed.
  for (int i = count - 1; i >= 0; --i) {
    const X509_NAME_ENTRY* entry = X509_NAME_get_entry(subject, i);
    if (entry == nullptr) return "";
    if (i != count - 1) {
      const X509_NAME_ENTRY* previous = X509_NAME_get_entry(subject, i + 1);
      out.push_back(X509_NAME_ENTRY_set(previous) == X509_NAME_ENTRY_set(entry) ? '+' : ',');
    }
    const std::string type = TypeName(X509_NAME_ENTRY_get_object(entry));
    if (type.empty() || !AppendEscaped(type, kMaxCertificatePrincipal, out)) return "";
    out.push_back('=');
    unsigned char* utf8 = nullptr;
    const int length = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry));
    if (length < 0) return "";  // not text (or not valid in its string type)
    const std::unique_ptr<unsigned char, void (*)(unsigned char*)> owned(utf8,
                                                                         [](unsigned char* p) { OPENSSL_free(p); });
    const std::string_view value(reinterpret_cast<const char*>(utf8), static_cast<size_t>(length));
    if (!AppendEscaped(value, kMaxCertificatePrincipal, out)) return "";
  }
  return out.size() <= kMaxCertificatePrincipal ? out : "";
}

// Each entry's type, RDN, string type and value bytes, length-prefixed: a serialization
// that is one-to-one and never fails, for a name that has no DER encoding.
std::string EntriesSerialized(const X509_NAME* subject) {
  std::string out = "gpufed-x509-name-entries";
  auto field = [&out](std::string_view bytes) { out += std::to_string(bytes.size()) + ":" + std::string(bytes); };
  const int count = subject == nullptr ? 0 : X509_NAME_entry_count(subject);
  for (int i = 0; i < count; ++i) {
    const X509_NAME_ENTRY* entry = X509_NAME_get_entry(subject, i);
    char oid[128] = {};
    const int n = OBJ_obj2txt(oid, sizeof oid, X509_NAME_ENTRY_get_object(entry), /*no_name=*/1);
    field(std::string_view(oid, static_cast<size_t>(std::clamp(n, 0, static_cast<int>(sizeof oid) - 1))));
    field(std::to_string(X509_NAME_ENTRY_set(entry)));
    const ASN1_STRING* value = X509_NAME_ENTRY_get_data(entry);
    field(std::to_string(ASN1_STRING_type(value)));
    field(std::string_view(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                           static_cast<size_t>(std::max(ASN1_STRING_length(value), 0))));
  }
  return out;
}

std::string HashedPrincipal(const X509_NAME* subject) {
  unsigned char* der = nullptr;
  const int length = subject == nullptr ? -1 : i2d_X509_NAME(subject, &der);
  const std::unique_ptr<unsigned char, void (*)(unsigned char*)> owned(der, [](unsigned char* p) { OPENSSL_free(p); });
  // A subject parsed from a certificate always has its DER (OpenSSL keeps the bytes it
  // read); a name built in memory with a value its string type cannot hold has none.
  const std::string bytes = length > 0 ? std::string(reinterpret_cast<const char*>(der), static_cast<size_t>(length))
                                       : EntriesSerialized(subject);
  return std::string(kHashedCertificatePrincipalPrefix) + Sha256Hex(bytes);
}

}  // namespace

std::string CertificatePrincipal(const X509_NAME* subject) {
  if (subject == nullptr) return HashedPrincipal(subject);
  std::string readable = ReadablePrincipal(subject);
  return readable.empty() ? HashedPrincipal(subject) : readable;
}

std::optional<std::string> VerifiedClientPrincipal(const SSL* ssl) {
  if (ssl == nullptr || (SSL_get_verify_mode(ssl) & SSL_VERIFY_PEER) == 0) return std::nullopt;
  const X509* peer = SSL_get0_peer_certificate(ssl);
  if (peer == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return std::nullopt;
  return CertificatePrincipal(X509_get_subject_name(peer));
}

std::string WhyNotACertificatePrincipal(std::string_view name) {
  if (name.substr(0, kHashedCertificatePrincipalPrefix.size()) == kHashedCertificatePrincipalPrefix) {
    const std::string_view hex = name.substr(kHashedCertificatePrincipalPrefix.size());
    const bool ok = hex.size() == 64 && hex.find_first_not_of("0123456789abcdef") == std::string_view::npos;
    return ok ? "" : "x509-sha256: is followed by 64 lower-case hex digits";
  }
  if (name.substr(0, kCertificatePrincipalPrefix.size()) != kCertificatePrincipalPrefix) {
    return "a certificate's principal begins with x509: or x509-sha256:";
  }
  if (name.size() > kMaxCertificatePrincipal) {
    return "a certificate's principal is at most " + std::to_string(kMaxCertificatePrincipal) + " characters";
  }
  const std::string_view rdns = name.substr(kCertificatePrincipalPrefix.size());
  // TYPE=VALUE parts separated by ',' or '+', every other byte plain or %XX.
  size_t pos = 0;
  for (;;) {
    const size_t end = std::min(rdns.find_first_of(",+", pos), rdns.size());
    const std::string_view part = rdns.substr(pos, end - pos);
    const size_t equals = part.find('=');
    if (equals == 0 || equals == std::string_view::npos || part.find('=', equals + 1) != std::string_view::npos) {
      return "each part of a certificate's principal is TYPE=VALUE (an '=' in a value is %3D)";
    }
    for (size_t i = 0; i < part.size(); ++i) {
      if (i == equals || Plain(static_cast<unsigned char>(part[i]))) continue;
      if (part[i] == '%' && i + 2 < part.size() && UpperHex(part[i + 1]) && UpperHex(part[i + 2])) {
        i += 2;
        continue;
      }
      return "a certificate's principal holds A-Z a-z 0-9 . _ @ : - and %XX escapes (upper-case hex) between its "
             "'=', ',' and '+'";
    }
    if (end == rdns.size()) return "";
    pos = end + 1;
  }
}

std::optional<Caller> CallerOnConnection(const Caller& token, const std::optional<std::string>& certificate) {
  if (IsCertificatePrincipal(token.principal) && certificate != token.principal) return std::nullopt;
  Caller caller = token;
  if (certificate.has_value()) caller.principal = *certificate;
  return caller;
}

}  // namespace gpufed::server
