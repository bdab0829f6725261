#pragma once
// Reading a record's members by type. A journal's records are evidence, but one with a
// valid chain may still be forged or come from a newer writer: a member of the wrong type
// reads as absent (never a json type_error out of a query, report or chargeback).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpufed::audit::typed {

inline std::string Str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

inline std::optional<int64_t> OptionalInt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

inline int64_t Int(const nlohmann::json& j, const char* key) { return OptionalInt(j, key).value_or(0); }

inline bool Bool(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

// The string elements of an array member (others skipped).
inline std::vector<std::string> Strings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const nlohmann::json& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

// An object member, or an empty object.
inline const nlohmann::json& Object(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : kEmpty;
}

}  // namespace gpufed::audit::typed
