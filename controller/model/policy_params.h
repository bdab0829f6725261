#pragma once
// The parameters a Policy's Lua hooks read, as the Policy declares them
// (`spec.parameters`): name, type, unit, what map keys name, a lower bound and a
// description. `validate` checks the params of the policy, and of every policy that
// imports it, against them (a hook comparing a string with a number fails at run time,
// every call); `gpufed docs lua` lists the standard library's.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/model/meta.h"

namespace gpufed::model {

enum class ParamType {
  kBoolean,
  kNumber,
  kString,
  kCurrency,        // a three-letter upper-case code, or "" (each cluster's own)
  kStringList,
  kNumberMap,       // name -> number
  kStringListMap,   // name -> list of strings
};
// "boolean", "number", "string", "currency", "list of string", "map of number",
// "map of list of string", in ParamType order: how `type:` is written.
std::span<const std::string_view> ParamTypeNames();
std::string_view ParamTypeName(ParamType type);

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::kString;
  std::string unit;            // of numbers: "hours", "per GPU-hour, in currency"
  std::string keys;            // of maps: what the keys name ("priority class", "GPU model")
  std::optional<double> min;   // of numbers and number maps' values
  std::string description;
  SourceLocation location;
};

// Why `value` does not fit `spec`, naming the member ("low: expected a number, got the
// string \"1.00\" (write 1.00 without quotes)"), or "" when it fits.
std::string ParamMismatch(const ParamSpec& spec, const nlohmann::json& value);

}  // namespace gpufed::model
