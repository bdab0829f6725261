// Observations of a workload view at the places a Lua hook read (see hooks.h).
#include <optional>
#include <string>
#include <string_view>

#include "controller/placement/hooks.h"

namespace gpufed::placement {
namespace {

// One reference token, unescaped ("~1" is '/', "~0" is '~').
std::string Unescape(std::string_view token) {
  std::string out;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size()) {
      out += token[++i] == '1' ? '/' : '~';
    } else {
      out += token[i];
    }
  }
  return out;
}

// The node at an RFC 6901 pointer, or nullptr when absent. Written out (rather than
// json_pointer) so a missing member or index is a null result, never an exception.
const nlohmann::json* Resolve(const nlohmann::json& root, std::string_view pointer) {
  const nlohmann::json* node = &root;
  size_t pos = 0;
  while (pos < pointer.size()) {
    if (pointer[pos] != '/') return nullptr;
    const size_t end = std::min(pointer.find('/', pos + 1), pointer.size());
    const std::string token = Unescape(pointer.substr(pos + 1, end - pos - 1));
    pos = end;
    if (node->is_object()) {
      const auto it = node->find(token);
      if (it == node->end()) return nullptr;
      node = &*it;
    } else if (node->is_array()) {
      size_t index = 0;
      if (token.empty() || token.size() > 9) return nullptr;
      for (char ch : token) {
        if (ch < '0' || ch > '9') return nullptr;
        index = index * 10 + static_cast<size_t>(ch - '0');
      }
      if (index >= node->size()) return nullptr;
      node = &(*node)[index];
    } else {
      return nullptr;
    }
  }
  return node;
}

}  // namespace

std::optional<std::string> ReadMember(const ViewRead& read) {
  if (read.kind == ViewRead::Kind::kNow || read.pointer.empty() || read.pointer.front() != '/') return std::nullopt;
  const std::string_view pointer(read.pointer);
  return Unescape(pointer.substr(1, pointer.find('/', 1) - 1));
}

std::string Observe(const nlohmann::json& view, const ViewRead& read) {
  const nlohmann::json* node = Resolve(view, read.pointer);
  switch (read.kind) {
    case ViewRead::Kind::kValue:
      // What Lua sees: nil, "a view of an object/array", or the scalar itself.
      if (node == nullptr || node->is_null()) return "n";
      if (node->is_object()) return "o";
      if (node->is_array()) return "a";
      return "v" + node->dump();
    case ViewRead::Kind::kLength:
      return "#" + std::to_string(node != nullptr && node->is_array() ? node->size() : 0);
    case ViewRead::Kind::kWhole:
      return node == nullptr ? "n" : "w" + node->dump();
    case ViewRead::Kind::kNow:
      return "t";  // the same for every workload; the placer adds the plan's time to the key
  }
  return "n";
}

}  // namespace gpufed::placement
