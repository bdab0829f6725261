#pragma once
// Connector factories by type name ("sim", "local", ...). Owned by main and passed
// down; there is no static registry. A factory validates the Cluster's connector
// settings before it creates a connector.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "connectors/core/connector.h"
#include "controller/model/cluster.h"

namespace gpufed::connectors {

// What every factory may use. `clock` must outlive the connectors created with it.
struct FactoryContext {
  const Clock* clock = nullptr;
  std::string state_dir;                          // this cluster's private folder
  std::map<std::string, std::string> settings;    // run-wide settings, e.g. "sim.scenario"
};

using Factory =
    std::function<Result<std::unique_ptr<Connector>>(const model::Cluster& cluster, const FactoryContext& ctx)>;

class ConnectorRegistry {
 public:
  // AlreadyExists when `type` is registered.
  Status Register(const std::string& type, Factory factory);
  // Creates the connector for `cluster.connector.type`, wrapped with the per-cluster
  // rate limit from the Cluster's connector settings. NotFound for an unknown type;
  // the factory's own error for invalid settings.
  Result<std::unique_ptr<Connector>> Create(const model::Cluster& cluster, const FactoryContext& ctx) const;
  std::vector<std::string> Types() const;

 private:
  std::map<std::string, Factory> factories_;
};

}  // namespace gpufed::connectors
