#include "controller/config/param_check.h"

#include <algorithm>
#include <set>

#include "controller/common/text.h"

namespace gpufed::config {
namespace {

// The location of the deepest member of `pointer` that was written, else `fallback`.
model::SourceLocation Where(const model::Policy& policy, std::string pointer, const model::SourceLocation& fallback) {
  while (!pointer.empty()) {
    auto it = policy.param_locations.find(pointer);
    if (it != policy.param_locations.end()) return it->second;
    pointer.erase(pointer.rfind('/'));
  }
  return fallback;
}

std::string EscapePointerToken(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return out;
}

}  // namespace

void DecodeParameters(const YamlField& field, std::vector<model::ParamSpec>& out) {
  if (!field.defined()) return;
  std::set<std::string> names;
  for (const YamlField& entry : field.Elements()) {
    if (!entry.ExpectObject({"name", "type", "unit", "keys", "min", "description"})) continue;
    model::ParamSpec spec;
    spec.location = entry.location();
    YamlField name = entry.Child("name");
    if (auto v = name.String(Required::kYes)) {
      spec.name = *v;
      if (!names.insert(*v).second) name.Error("parameter '" + *v + "' is declared twice");
    }
    if (auto v = entry.Child("type").Enum(model::ParamTypeNames(), Required::kYes)) {
      const auto types = model::ParamTypeNames();
      spec.type = static_cast<model::ParamType>(std::find(types.begin(), types.end(), *v) - types.begin());
    }
    if (auto v = entry.Child("unit").String()) spec.unit = *v;
    if (auto v = entry.Child("keys").String()) spec.keys = *v;
    spec.min = entry.Child("min").Number(-1e15, 1e15);
    if (auto v = entry.Child("description").String()) spec.description = *v;
    out.push_back(std::move(spec));
  }
}

void RecordParamLocations(const YamlField& params, const std::string& pointer,
                          std::map<std::string, model::SourceLocation>& out) {
  if (!params.is_map()) return;
  for (const auto& [key, value] : params.Entries()) {
    const std::string at = pointer + "/" + EscapePointerToken(key);
    out[at] = value.location();
    RecordParamLocations(value, at, out);
  }
}

void CheckPolicyParams(const model::Config& config, Diagnostics& diagnostics) {
  for (const model::Policy& policy : config.policies) {
    if (policy.parameters.empty() || !policy.params.is_object()) continue;
    const std::string owner = policy.import.empty() ? "policy " + policy.metadata.name : policy.import;
    std::vector<std::string_view> declared;
    declared.reserve(policy.parameters.size());
    for (const model::ParamSpec& p : policy.parameters) declared.push_back(p.name);
    for (auto it = policy.params.begin(); it != policy.params.end(); ++it) {
      const std::string pointer = "/" + EscapePointerToken(it.key());
      const model::SourceLocation at = Where(policy, pointer, policy.metadata.location);
      const std::string field = "spec.params." + it.key();
      auto spec = std::find_if(policy.parameters.begin(), policy.parameters.end(),
                               [&](const model::ParamSpec& p) { return p.name == it.key(); });
      if (spec == policy.parameters.end()) {
        const std::string closest = ClosestMatch(it.key(), declared);
        diagnostics.Add({at.file, at.line, at.column, field,
                         "unknown parameter '" + it.key() + "' of " + owner +
                             (closest.empty() ? "" : " (did you mean '" + closest + "'?)") + "; its parameters: " +
                             Join(std::vector<std::string>(declared.begin(), declared.end()), ", ")});
        continue;
      }
      const std::string why = model::ParamMismatch(*spec, it.value());
      if (why.empty()) continue;
      // "low: expected ...": the member's own line when it was written on one.
      const size_t colon = why.find(": ");
      const bool member =
          it.value().is_object() && colon != std::string::npos && it.value().contains(why.substr(0, colon));
      const model::SourceLocation where =
          member ? Where(policy, pointer + "/" + EscapePointerToken(why.substr(0, colon)), at) : at;
      std::string expected = std::string(model::ParamTypeName(spec->type));
      if (!spec->unit.empty()) expected += ", " + spec->unit;
      diagnostics.Add({where.file, where.line, where.column, member ? field + "." + why.substr(0, colon) : field,
                       (member ? why.substr(colon + 2) : why) + " (" + it.key() + " is " + expected + ")"});
    }
  }
}

}  // namespace gpufed::config
