#pragma once
// The API's bearer tokens, kept as SHA-256 digests: a lookup hashes the presented token and
// compares it with every stored digest in constant time, so neither the time of an answer
// nor a copy in memory gives a token away (the plain tokens live only while their file is
// parsed).
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
  std::string tenant;  // kTenant only
  static Caller Admin() { return {Role::kAdmin, ""}; }
  static Caller Metrics() { return {Role::kMetrics, ""}; }
  static Caller OfTenant(std::string name) { return {Role::kTenant, std::move(name)}; }
  bool operator==(const Caller&) const = default;
};

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

// Parses a tokens file: "TOKEN TENANT", "TOKEN admin" or "TOKEN metrics" per line, '#'
// comments; tokens of at least 16 characters. `admin` and `metrics` are roles, never
// tenants (config refuses Tenants with those names). The text is not kept.
Result<TokenTable> ParseTokens(std::string_view text);

}  // namespace gpufed::server
