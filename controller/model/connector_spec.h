#pragma once
// A Cluster's `spec.connector` block as the model keeps it: provider-neutral. The model
// knows no provider: `type` is a name the connector registry resolves, and the block's
// other fields are kept as written (value and position) for that provider to decode into
// its own typed config (connectors/<provider>/*_config.h) and to report on with
// file:line. Only what every provider shares is decoded here: the loop's call timeout
// and the cluster's request rate (qps, burst).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/duration.h"
#include "controller/model/meta.h"

namespace gpufed::model {

// One provider field as written: the YAML value typed by the YAML 1.2 core schema, as
// JSON (`8` a number, `"8"` and `yes` strings; a mapping an object), its field path and
// where its value is. Built in code (tests), the location is empty.
struct ConnectorField {
  nlohmann::json value;
  std::string path;  // "spec.connector.caFile"
  SourceLocation location;
  bool operator==(const ConnectorField&) const = default;
};

// The keys the model decodes itself; every other key of the block is a provider field.
inline constexpr std::string_view kConnectorSharedKeys[] = {"type", "timeout", "qps", "burst"};

struct ConnectorSpec {
  std::string type = "sim";   // the provider ("sim", "slurm", ...): a connector registry name
  SourceLocation location;    // of the block (its `type`), for errors about the block
  std::map<std::string, ConnectorField> fields;  // by key as written, shared keys excluded
  // Shared by every provider: the loop's time limit for one connector call, and the
  // cluster's request rate, enforced once (by the registry, or by a provider that paces
  // its own API requests). Secrets are never held, only where they are.
  Duration timeout = Duration::FromSeconds(10);
  double qps = 50;
  int burst = 100;

  // The provider field `key`; null when the block does not set it.
  const ConnectorField* Find(std::string_view key) const;
  // Sets the provider field `key` (programs and tests that build a Cluster in code).
  ConnectorSpec& Set(const std::string& key, nlohmann::json value);
  bool operator==(const ConnectorSpec&) const = default;
};

// The same block wherever it was written (field positions ignored).
bool SameConnector(const ConnectorSpec& a, const ConnectorSpec& b);

// A problem a provider found in a block: field path, position and message, as the
// loader reports it ("file:line:col: error: spec.connector.caFile: expected a string").
struct ConnectorProblem {
  std::string field;
  SourceLocation location;
  std::string message;
  // "file:line:col: field: message" (or "field: message" without a position).
  std::string ToString() const;
};

// What the loader asks of the connector providers a build has (connectors::
// ConnectorRegistry implements it), so that it checks `spec.connector` at load time
// without knowing any provider's name or fields.
class ConnectorCatalog {
 public:
  virtual ~ConnectorCatalog() = default;
  // Every problem of `spec` (a type no provider has is one); none when it is valid.
  virtual std::vector<ConnectorProblem> Check(const ConnectorSpec& spec) const = 0;
};

}  // namespace gpufed::model
