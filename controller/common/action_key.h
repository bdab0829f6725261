#pragma once
// The key of one placement attempt of a workload, "<uid>.a<attempt>": the store's action
// rows, the journal's decision index and every connector's idempotency key use it, so it
// is built and parsed here only.
#include <optional>
#include <string>
#include <string_view>

namespace gpufed {

std::string ActionKey(std::string_view uid, int attempt);

struct ParsedActionKey {
  std::string uid;
  int attempt = 0;
};
// The uid and attempt of a key; nullopt when the text does not end in ".a<digits>" or
// the uid before it is empty.
std::optional<ParsedActionKey> ParseActionKey(std::string_view key);

}  // namespace gpufed
