#include "controller/server/token_table.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <map>
#include <string>

#include "controller/common/vocabulary.h"
#include "controller/server/client_certificate.h"

namespace gpufed::server {

TokenTable::TokenTable(std::initializer_list<std::pair<std::string_view, Caller>> tokens) {
  for (const auto& [token, caller] : tokens) Add(token, caller);
}

TokenTable::Digest TokenTable::DigestOf(std::string_view token) {
  Digest d{};
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), d.data());
  return d;
}

void TokenTable::Add(std::string_view token, Caller caller) {
  const Digest d = DigestOf(token);
  for (Entry& e : entries_) {
    if (CRYPTO_memcmp(e.digest.data(), d.data(), d.size()) == 0) {
      e.caller = std::move(caller);
      return;
    }
  }
  entries_.push_back({d, std::move(caller)});
}

const Caller* TokenTable::Find(std::string_view presented) const {
  const Digest d = DigestOf(presented);
  const Caller* found = nullptr;
  for (const Entry& e : entries_) {
    // No early exit: the time does not depend on which entry (if any) matches.
    const bool match = CRYPTO_memcmp(e.digest.data(), d.data(), d.size()) == 0;
    found = match ? &e.caller : found;
  }
  return found;
}

std::string DefaultTokenPrincipal(int line) { return "tokens-file:line-" + std::to_string(line); }

std::string WhyNotAPrincipalName(std::string_view name) {
  constexpr size_t kMaxName = 64;
  if (name.empty() || name.size() > kMaxName) return "a name is 1 to 64 characters";
  for (char c : name) {
    const bool allowed = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                         c == '_' || c == '@' || c == ':' || c == '-';
    if (!allowed) return "a name is made of A-Z a-z 0-9 . _ @ : - only";
  }
  // The journal's principals must say who acted without doubt: these are the controller's.
  if (name == kRepositoryPrincipal || name == kScenarioPrincipal) {
    return "'" + std::string(name) + "' is the principal of the controller's own workload source";
  }
  for (std::string_view prefix : {std::string_view("tokens-file:"), std::string_view("state:")}) {
    if (name.substr(0, prefix.size()) == prefix) {
      return "names beginning with '" + std::string(prefix) + "' are the controller's defaults";
    }
  }
  if (IsCertificatePrincipal(name)) return "names beginning with 'x509:' or 'x509-' are client certificates'";
  return "";
}

bool IsCertificatePrincipal(std::string_view principal) {
  return principal.substr(0, kCertificatePrincipalPrefix.size()) == kCertificatePrincipalPrefix ||
         principal.substr(0, 5) == "x509-";
}

size_t TokenTable::bound_to_certificates() const {
  size_t n = 0;
  for (const Entry& e : entries_) n += IsCertificatePrincipal(e.caller.principal) ? 1 : 0;
  return n;
}

namespace {

// The line's name is refused; the text is not repeated (a misplaced column could be a secret).
Status NotAName(int line, const std::string& why) {
  return InvalidArgument("tokens line " + std::to_string(line) +
                         ": the token's name (third column) is not a name: " + why);
}

Status NameTaken(int line, const std::string& name, int first_line) {
  return InvalidArgument("tokens line " + std::to_string(line) + ": the name " + name + " is already line " +
                         std::to_string(first_line) + "'s; each token needs a name of its own");
}

}  // namespace

Result<TokenTable> ParseTokens(std::string_view text) {
  TokenTable tokens;
  std::map<std::string, int, std::less<>> line_of_name;  // principal -> the line that named it
  int n = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++n;
    if (line.empty() || line[0] == '#') continue;
    const std::string where = "tokens line " + std::to_string(n);
    // Up to three whitespace-separated fields, read in place (no copy of the token stays).
    std::string_view fields[3];
    size_t count = 0, i = 0;
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
    while (i < line.size() && count < 3) {
      while (i < line.size() && space(line[i])) ++i;
      size_t start = i;
      while (i < line.size() && !space(line[i])) ++i;
      if (i > start) fields[count++] = line.substr(start, i - start);
    }
    while (i < line.size() && space(line[i])) ++i;
    if (count == 0) continue;
    if (count < 2 || i < line.size()) {
      return InvalidArgument(where +
                             ": expected 'TOKEN TENANT', 'TOKEN admin' or 'TOKEN metrics', then an optional NAME");
    }
    if (fields[0].size() < 16) return InvalidArgument(where + ": token shorter than 16 characters");
    std::string principal = DefaultTokenPrincipal(n);
    if (count == 3) {
      // A certificate's principal binds the token to that certificate; anything else is a name.
      const std::string why =
          IsCertificatePrincipal(fields[2]) ? WhyNotACertificatePrincipal(fields[2]) : WhyNotAPrincipalName(fields[2]);
      if (!why.empty()) return NotAName(n, why);
      principal = std::string(fields[2]);
    }
    if (auto [at, added] = line_of_name.emplace(principal, n); !added && !IsCertificatePrincipal(principal)) {
      return NameTaken(n, principal, at->second);
    }
    const std::string_view who = fields[1];
    tokens.Add(fields[0], who == "admin"     ? Caller::Admin(std::move(principal))
                          : who == "metrics" ? Caller::Metrics(std::move(principal))
                                             : Caller::OfTenant(std::string(who), std::move(principal)));
  }
  return tokens;
}

}  // namespace gpufed::server
