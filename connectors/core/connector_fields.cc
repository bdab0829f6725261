#include "connectors/core/connector_fields.h"

#include <algorithm>

#include "controller/common/text.h"

namespace gpufed::connectors {
namespace {

// "a number", "a mapping", ... as the loader names YAML values.
std::string Describe(const nlohmann::json& value) {
  if (value.is_object()) return "a mapping";
  if (value.is_array()) return "a list";
  if (value.is_boolean()) return "a boolean";
  if (value.is_number_integer() || value.is_number_unsigned()) return "an integer";
  if (value.is_number()) return "a number";
  if (value.is_null()) return "nothing (null)";
  return "a string";
}

}  // namespace

ConnectorFieldReader::ConnectorFieldReader(const model::ConnectorSpec& spec,
                                           std::initializer_list<std::string_view> known)
    : spec_(spec) {
  const std::vector<std::string_view> names(known.begin(), known.end());
  for (const auto& [key, field] : spec.fields) {
    if (std::find(names.begin(), names.end(), key) != names.end()) continue;
    // The loader's wording for an unknown field, and what this provider reads instead.
    std::string message = "unknown field '" + key + "'";
    const std::string best = ClosestMatch(key, names);
    if (!best.empty()) message += " (did you mean '" + best + "'?)";
    std::vector<std::string> all(std::begin(model::kConnectorSharedKeys), std::end(model::kConnectorSharedKeys));
    all.insert(all.end(), names.begin(), names.end());
    Add(field, message + "; a " + spec.type + " connector reads " + Join(all, ", "));
  }
}

std::optional<std::string> ConnectorFieldReader::String(std::string_view key) {
  const model::ConnectorField* field = spec_.Find(key);
  if (field == nullptr) return std::nullopt;
  if (!field->value.is_string()) {
    std::string message = "expected a string, got " + Describe(field->value);
    if (field->value.is_primitive() && !field->value.is_null())
      message += " (quote it: \"" + field->value.dump() + "\")";
    Add(*field, message);
    return std::nullopt;
  }
  return field->value.get<std::string>();
}

std::optional<std::string> ConnectorFieldReader::Enum(std::string_view key, std::span<const std::string_view> allowed) {
  std::optional<std::string> value = String(key);
  if (!value) return std::nullopt;
  if (std::find(allowed.begin(), allowed.end(), *value) != allowed.end()) return value;
  std::vector<std::string> names(allowed.begin(), allowed.end());
  const std::string best = ClosestMatch(*value, allowed);
  Add(*spec_.Find(key), "invalid value '" + *value + "' (allowed: " + Join(names, ", ") + ")" +
                            (best.empty() ? "" : "; did you mean '" + best + "'?"));
  return std::nullopt;
}

void ConnectorFieldReader::Report(std::string_view key, const std::string& message) {
  if (const model::ConnectorField* field = spec_.Find(key)) Add(*field, message);
}

void ConnectorFieldReader::Add(const model::ConnectorField& field, std::string message) {
  problems_.push_back({field.path, field.location, std::move(message)});
}

Status ProblemsToStatus(const std::vector<model::ConnectorProblem>& problems) {
  if (problems.empty()) return Status::Ok();
  std::vector<std::string> lines;
  lines.reserve(problems.size());
  for (const model::ConnectorProblem& p : problems) lines.push_back(p.ToString());
  return InvalidArgument(Join(lines, "; "));
}

}  // namespace gpufed::connectors
