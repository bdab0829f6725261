#pragma once
// Who a mutual-TLS client is: the principal its verified certificate's subject names, in a
// form that the journal, `audit query --principal`, logs and tables carry safely whatever
// the subject holds (commas, quotes, newlines, any UTF-8, kilobytes of it), and the rule by
// which a token bound to a certificate (a tokens-file line named by a certificate
// principal) is accepted only over a connection that presented that certificate's subject.
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <optional>
#include <string>
#include <string_view>

#include "controller/server/token_table.h"

namespace gpufed::server {

// The longest readable certificate principal; a longer one is named by its hash.
inline constexpr size_t kMaxCertificatePrincipal = 256;
// The prefix of a subject named by its hash.
inline constexpr std::string_view kHashedCertificatePrincipalPrefix = "x509-sha256:";

// The principal of a certificate subject, one of:
//   "x509:" then the subject's RDNs most specific first (the order of RFC 4514 and of
//   `openssl x509 -nameopt RFC2253`), each TYPE=VALUE, RDNs joined by ',' and the parts of
//   a multi-valued RDN by '+'. TYPE is OpenSSL's short name (CN, O, OU, C, L, ST, DC,
//   emailAddress, ...) or the dotted OID; VALUE is the value as UTF-8. In both, every byte
//   other than A-Z a-z 0-9 . _ @ : - is written %XX (upper-case hex), so ',', '+' and '='
//   are only ever structure and the principal is printable ASCII without spaces:
//   x509:CN=alice,O=team-nlp; x509:CN=J%C3%BCrgen%20M,O=ml%2C%20inc.
//   "x509-sha256:" then the 64 lower-case hex digits of SHA-256 over the subject's DER,
//   when the first form would be longer than kMaxCertificatePrincipal, when the subject
//   is empty, or when a value is not text (an OCTET STRING, say, or bytes that do not
//   decode as their string type). (A name built in memory that has no DER encoding is
//   hashed from its entries instead; a certificate's subject always has one.)
// Two subjects get the same principal only when they differ in nothing but the string
// types of equal values (PrintableString or UTF8String "alice"), which X.509's name
// matching (RFC 5280, 7.1) treats as the same name too.
std::string CertificatePrincipal(const X509_NAME* subject);

// The principal of the client certificate `ssl`'s handshake asked for and verified;
// nullopt for null (plain HTTP), a server that asks for no client certificate, or a
// certificate that did not verify.
std::optional<std::string> VerifiedClientPrincipal(const SSL* ssl);

// Empty when `name` is a principal CertificatePrincipal could return (a tokens file binds
// a token to a certificate by naming it so); else why not.
std::string WhyNotACertificatePrincipal(std::string_view name);

// Whom a call made with the token that names `token` acts as, over a connection whose
// verified client certificate is `certificate` (nullopt: none): the token's role and
// tenant (authorisation is the token's), named by the certificate when there is one.
// nullopt when the token is bound to a certificate (IsCertificatePrincipal of its name)
// and the connection did not present that one: a bound token alone is as good as an
// unknown token.
std::optional<Caller> CallerOnConnection(const Caller& token, const std::optional<std::string>& certificate);

}  // namespace gpufed::server
