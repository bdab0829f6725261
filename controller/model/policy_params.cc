#include "controller/model/policy_params.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace gpufed::model {
namespace {

constexpr std::array<std::string_view, 7> kTypeNames = {
    "boolean", "number", "string", "currency", "list of string", "map of number", "map of list of string"};

// "the string \"1.00\"", "a list", ...: what was written, for messages.
std::string Described(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::string: {
      std::string text = v.get<std::string>();
      if (text.size() > 40) text = text.substr(0, 40) + "...";
      return "the string \"" + text + "\"";
    }
    case nlohmann::json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float: return "the number " + v.dump();
    case nlohmann::json::value_t::array: return "a list";
    case nlohmann::json::value_t::object: return "a mapping";
    default: return "nothing";
  }
}

// A string that reads as a number: the likely slip is the quotes.
bool LooksNumeric(const nlohmann::json& v) {
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.empty() || s.size() > 32) return false;
  size_t digits = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (!(c == '.' || (i == 0 && (c == '-' || c == '+')))) {
      return false;
    }
  }
  return digits > 0;
}

std::string NumberMismatch(const ParamSpec& spec, const nlohmann::json& v) {
  if (!v.is_number()) {
    std::string why = "expected a number, got " + Described(v);
    if (LooksNumeric(v)) why += " (write " + v.get<std::string>() + " without quotes)";
    return why;
  }
  const double x = v.get<double>();
  if (!std::isfinite(x)) return "expected a finite number";
  if (spec.min && x < *spec.min) {
    char least[32];
    std::snprintf(least, sizeof least, "%g", *spec.min);
    return std::string("expected a number of at least ") + least + ", got " + v.dump();
  }
  return "";
}

std::string StringListMismatch(const nlohmann::json& v) {
  if (!v.is_array()) return "expected a list of strings, got " + Described(v);
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) return "[" + std::to_string(i) + "]: expected a string, got " + Described(v[i]);
  }
  return "";
}

}  // namespace

std::span<const std::string_view> ParamTypeNames() { return kTypeNames; }

std::string_view ParamTypeName(ParamType type) { return kTypeNames[static_cast<size_t>(type)]; }

std::string ParamMismatch(const ParamSpec& spec, const nlohmann::json& value) {
  switch (spec.type) {
    case ParamType::kBoolean: return value.is_boolean() ? "" : "expected true or false, got " + Described(value);
    case ParamType::kNumber: return NumberMismatch(spec, value);
    case ParamType::kString: return value.is_string() ? "" : "expected a string, got " + Described(value);
    case ParamType::kCurrency: {
      if (!value.is_string()) return "expected a currency code (EUR), got " + Described(value);
      const std::string& code = value.get_ref<const std::string&>();
      const bool ok = code.empty() || (code.size() == 3 && std::all_of(code.begin(), code.end(),
                                                                       [](char c) { return c >= 'A' && c <= 'Z'; }));
      return ok ? "" : "expected a three-letter upper-case currency code (EUR), got " + Described(value);
    }
    case ParamType::kStringList: return StringListMismatch(value);
    case ParamType::kNumberMap:
    case ParamType::kStringListMap: {
      if (!value.is_object()) return "expected a mapping of " + spec.keys + " to values, got " + Described(value);
      for (auto it = value.begin(); it != value.end(); ++it) {
        const std::string why =
            spec.type == ParamType::kNumberMap ? NumberMismatch(spec, it.value()) : StringListMismatch(it.value());
        if (!why.empty()) return it.key() + (why.front() == '[' ? "" : ": ") + why;
      }
      return "";
    }
  }
  return "";
}

}  // namespace gpufed::model
