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
#include "connectors/core/ledger.h"
#include "controller/model/cluster.h"

namespace gpufed::connectors {

// What every factory may use. `clock` must outlive the connectors created with it.
struct FactoryContext {
  const Clock* clock = nullptr;
  std::string state_dir;                          // this cluster's private folder
  std::map<std::string, std::string> settings;    // run-wide settings, e.g. "sim.scenario"
  // `gpufed plan --state`: a connector that only observes. Its factory creates and
  // changes nothing in `state_dir` (no folder made, the ledger opened LedgerAccess::
  // kReadOnly), and the connector launches, signals and reaps nothing; Observe still
  // reports what the folder and the cluster say. The registry refuses its Apply.
  bool read_only = false;
  LedgerAccess ledger_access() const { return read_only ? LedgerAccess::kReadOnly : LedgerAccess::kReadWrite; }
};

using Factory =
    std::function<Result<std::unique_ptr<Connector>>(const model::Cluster& cluster, const FactoryContext& ctx)>;

class ConnectorRegistry {
 public:
  // AlreadyExists when `type` is registered.
  Status Register(const std::string& type, Factory factory);
  // Creates the connector for `cluster.connector.type`, wrapped with the per-cluster
  // rate limit from the Cluster's connector settings, and for a `ctx.read_only` one
  // with a guard whose Apply fails (FailedPrecondition) without reaching the connector.
  // NotFound for an unknown type; the factory's own error for invalid settings.
  Result<std::unique_ptr<Connector>> Create(const model::Cluster& cluster, const FactoryContext& ctx) const;
  std::vector<std::string> Types() const;

 private:
  std::map<std::string, Factory> factories_;
};

}  // namespace gpufed::connectors
