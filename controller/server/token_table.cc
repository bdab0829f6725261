#include "controller/server/token_table.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <sstream>

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

Result<TokenTable> ParseTokens(std::string_view text) {
  TokenTable tokens;
  int n = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++n;
    if (line.empty() || line[0] == '#') continue;
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
    if (count != 2 || i < line.size()) {
      return InvalidArgument("tokens line " + std::to_string(n) +
                             ": expected 'TOKEN TENANT', 'TOKEN admin' or 'TOKEN metrics'");
    }
    if (fields[0].size() < 16) {
      return InvalidArgument("tokens line " + std::to_string(n) + ": token shorter than 16 characters");
    }
    const std::string_view who = fields[1];
    tokens.Add(fields[0], who == "admin"     ? Caller::Admin()
                          : who == "metrics" ? Caller::Metrics()
                                             : Caller::OfTenant(std::string(who)));
  }
  return tokens;
}

}  // namespace gpufed::server
