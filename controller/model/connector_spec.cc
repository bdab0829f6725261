#include "controller/model/connector_spec.h"

namespace gpufed::model {

const ConnectorField* ConnectorSpec::Find(std::string_view key) const {
  auto it = fields.find(std::string(key));
  return it == fields.end() ? nullptr : &it->second;
}

ConnectorSpec& ConnectorSpec::Set(const std::string& key, nlohmann::json value) {
  fields[key] = ConnectorField{std::move(value), "spec.connector." + key, {}};
  return *this;
}

bool SameConnector(const ConnectorSpec& a, const ConnectorSpec& b) {
  if (a.type != b.type || a.timeout != b.timeout || a.qps != b.qps || a.burst != b.burst) return false;
  if (a.fields.size() != b.fields.size()) return false;
  for (const auto& [key, field] : a.fields) {
    const ConnectorField* other = b.Find(key);
    if (other == nullptr || other->value != field.value) return false;
  }
  return true;
}

std::string ConnectorProblem::ToString() const {
  std::string where;
  if (!location.file.empty()) {
    where = location.file + ":" + std::to_string(location.line) + ":" + std::to_string(location.column) + ": ";
  }
  return where + (field.empty() ? "" : field + ": ") + message;
}

}  // namespace gpufed::model
