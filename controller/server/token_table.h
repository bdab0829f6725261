#pragma once
// The API's bearer tokens, kept as SHA-256 digests: a lookup hashes the presented token and
// compares it with every stored digest in constant time, so neither the time of an answer
// nor a copy in memory gives a token away (the plain tokens live only while their file is
// parsed). Each token has a name, its principal: what the audit journal records for the
// calls it makes, so no record ever holds a token or its digest.
#include <array>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/common/status.h"

namespace gpufed::server {

// Who a bearer token speaks for.
struct Caller {
  enum class Role { kAdmin, kTenant, kMetrics };
  Role role = Role::kTenant;
  std::string tenant;     // kTenant only
  // Who the journal says acted: the token's name (never the token), or, over mutual TLS,
  // the client certificate's principal (CallerOnConnection, client_certificate.h).
  std::string principal;
  static Caller Admin(std::string principal) { return {Role::kAdmin, "", std::move(principal)}; }
  static Caller Metrics(std::string principal) { return {Role::kMetrics, "", std::move(principal)}; }
  static Caller OfTenant(std::string name, std::string principal) {
    return {Role::kTenant, std::move(name), std::move(principal)};
  }
  bool operator==(const Caller&) const = default;
};

// The principal of the admin token gpufed generates into <state>/admin.token when it is
// given no tokens file.
inline constexpr std::string_view kGeneratedAdminPrincipal = "state:admin.token";
// The principal of an unnamed token of a tokens file: "tokens-file:line-<N>", stable while
// the file's lines stay where they are (name a token to keep its name through edits).
std::string DefaultTokenPrincipal(int line);
// Empty when `name` may name a token of a tokens file; else why not. A name is 1 to 64 of
// [A-Za-z0-9._@:-]; `repository` and `scenario` (the principals of the controller's own
// workload sources) and names beginning with `tokens-file:` or `state:` (the defaults')
// are the controller's own, and names beginning with `x509:` or `x509-` are client
// certificates' (IsCertificatePrincipal).
std::string WhyNotAPrincipalName(std::string_view name);

// The prefix of the principals that client certificates' subjects name
// (client_certificate.h: "x509:CN=alice,O=team-nlp", or "x509-sha256:HEX").
inline constexpr std::string_view kCertificatePrincipalPrefix = "x509:";
// True for a principal a client certificate names: one beginning with `x509:` or `x509-`,
// which no plain token name may take. A token named so is bound to that certificate: it is
// accepted only over a connection whose verified client certificate has that subject
// (CallerOnConnection).
bool IsCertificatePrincipal(std::string_view principal);

class TokenTable {
 public:
  TokenTable() = default;
  TokenTable(std::initializer_list<std::pair<std::string_view, Caller>> tokens);

  // A token given twice keeps its last caller (as a later line of a tokens file wins).
  void Add(std::string_view token, Caller caller);
  // The caller `presented` names; null for an unknown token. Every stored digest is
  // compared, whatever matches.
  const Caller* Find(std::string_view presented) const;
  size_t size() const { return entries_.size(); }
  // How many tokens are bound to a client certificate (IsCertificatePrincipal).
  size_t bound_to_certificates() const;
  bool empty() const { return entries_.empty(); }

 private:
  using Digest = std::array<unsigned char, 32>;
  static Digest DigestOf(std::string_view token);
  struct Entry {
    Digest digest;
    Caller caller;
  };
  std::vector<Entry> entries_;
};

// Parses a tokens file: "TOKEN TENANT", "TOKEN admin" or "TOKEN metrics" per line, each
// optionally followed by the token's NAME (WhyNotAPrincipalName; default
// DefaultTokenPrincipal(line)) or by a client certificate's principal, which binds the
// token to that certificate (WhyNotACertificatePrincipal, client_certificate.h); '#'
// comments; tokens of at least 16 characters. `admin` and `metrics` are roles, never
// tenants (config refuses Tenants with those names). Two lines with the same name are
// refused, naming both lines; several tokens may be bound to one certificate (one client
// with tokens for several tenants, say). The text is not kept.
Result<TokenTable> ParseTokens(std::string_view text);

}  // namespace gpufed::server
