#pragma once
// How a provider reads its fields of a Cluster's `spec.connector` block (model::
// ConnectorSpec keeps them as written, with their positions): each reader checks the
// value's type and reports a problem naming the field path and its file:line, so
// `gpufed validate` shows a provider's errors as it shows the loader's. A provider
// decodes its block into its own typed config with one of these, both when the loader
// checks the repository and when the provider's factory makes the connector.
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "controller/common/duration.h"
#include "controller/common/status.h"
#include "controller/model/connector_spec.h"

namespace gpufed::connectors {

class ConnectorFieldReader {
 public:
  // Reports every provider field of `spec` that is not in `known` (a misspelt setting
  // would otherwise be ignored), suggesting the closest known one.
  ConnectorFieldReader(const model::ConnectorSpec& spec, std::initializer_list<std::string_view> known);

  // The value of `key` when the block sets it and it has the type asked for; nullopt
  // (and a problem, for a wrong type) otherwise.
  std::optional<std::string> String(std::string_view key);
  // One of `allowed`; reports any other string, listing them.
  std::optional<std::string> Enum(std::string_view key, std::span<const std::string_view> allowed);

  // A provider's own finding about a field the block sets (a bad URL, ...).
  void Report(std::string_view key, const std::string& message);

  const std::vector<model::ConnectorProblem>& problems() const { return problems_; }
  bool ok() const { return problems_.empty(); }

 private:
  void Add(const model::ConnectorField& field, std::string message);

  const model::ConnectorSpec& spec_;
  std::vector<model::ConnectorProblem> problems_;
};

// The problems as one InvalidArgument ("file:line:col: spec.connector.x: message; ..."):
// what a factory returns for a block nobody checked before (a load without a catalog).
Status ProblemsToStatus(const std::vector<model::ConnectorProblem>& problems);

}  // namespace gpufed::connectors
