#include "controller/common/action_key.h"

namespace gpufed {

std::string ActionKey(std::string_view uid, int attempt) {
  std::string key(uid);
  key += ".a";
  key += std::to_string(attempt);
  return key;
}

std::optional<ParsedActionKey> ParseActionKey(std::string_view key) {
  constexpr size_t kMaxAttemptDigits = 9;  // fits an int
  const size_t pos = key.rfind(".a");
  if (pos == std::string_view::npos || pos == 0) return std::nullopt;
  const std::string_view digits = key.substr(pos + 2);
  if (digits.empty() || digits.size() > kMaxAttemptDigits) return std::nullopt;
  int attempt = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return std::nullopt;
    attempt = attempt * 10 + (c - '0');
  }
  return ParsedActionKey{std::string(key.substr(0, pos)), attempt};
}

}  // namespace gpufed
