#pragma once
// The connector providers a build has, by type name ("sim", "slurm", ...). Owned by main
// and passed down; there is no static registry. A provider owns everything about its
// `spec.connector` block: it checks the block (the loader asks, through model::
// ConnectorCatalog, so `gpufed validate` reports a provider's errors with file:line), it
// publishes the block's JSON Schema (assembled into schemas/cluster.schema.json), it
// declares what it can do, and its factory makes the connector.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "connectors/core/connector.h"
#include "connectors/core/ledger.h"
#include "controller/common/log.h"
#include "controller/model/cluster.h"

namespace gpufed::connectors {

// What every factory may use. `clock` must outlive the connectors created with it.
struct FactoryContext {
  const Clock* clock = nullptr;
  std::string state_dir;  // this cluster's private folder
  // `gpufed plan --state`: a connector that only observes. Its factory creates and
  // changes nothing in `state_dir` (no folder made, the ledger opened LedgerAccess::
  // kReadOnly), and the connector launches, signals and reaps nothing; Observe still
  // reports what the folder and the cluster say. The registry refuses its Apply.
  bool read_only = false;
  // The process's log (connectors log a peer's refusals and recoveries); null: standard
  // error. Must outlive the connector.
  const Logger* log = nullptr;
  LedgerAccess ledger_access() const { return read_only ? LedgerAccess::kReadOnly : LedgerAccess::kReadWrite; }
  // Non-zero: this replica leads term `leader_epoch` of several that share one store
  // (`gpufed run --store`, issue 38), and the replicas make this cluster's connector in
  // turn. A connector whose record of its actions lives on this host (a `local` cluster's
  // processes) must then keep it where every replica finds it, and refuse a deposed term.
  int64_t leader_epoch = 0;
};

using Factory =
    std::function<Result<std::unique_ptr<Connector>>(const model::Cluster& cluster, const FactoryContext& ctx)>;

// What a provider's connectors can do, for the code that must know without naming it.
struct ConnectorCapabilities {
  // Runs on the controller's clock, whatever it is: a federation whose clusters all do
  // can run in accelerated virtual time (the simulator). Real clusters keep wall time.
  bool virtual_time = false;
  bool mig = false;            // places on MIG slices of a node pool with sharing: mig
  bool elastic_nodes = false;  // grows and shrinks the cluster (spec.elasticity)
  // Applies the cluster's qps/burst to each of its own API requests (an HTTP client's
  // token bucket), so the registry does not wrap it in a second limiter.
  bool paces_requests = false;
};

struct ConnectorProvider {
  std::string type;     // the name spec.connector.type gives
  std::string summary;  // a few words for the schema's and the errors' list of types
  ConnectorCapabilities capabilities;
  // Every problem of a block of this type (connector_fields.h); none when it is valid.
  // Null: the provider reads no field besides the shared ones (type, timeout, qps, burst).
  std::function<std::vector<model::ConnectorProblem>(const model::ConnectorSpec&)> check;
  // The JSON Schema `properties` of the fields `check` accepts, each with a description
  // (an empty object for none). The shared fields are the registry's.
  nlohmann::json schema_properties = nlohmann::json::object();
  Factory factory;
};

class ConnectorRegistry : public model::ConnectorCatalog {
 public:
  // AlreadyExists when the type is registered; InvalidArgument without a type or factory.
  Status Register(ConnectorProvider provider);
  // A provider with no fields and no capabilities (test doubles).
  Status Register(const std::string& type, Factory factory);
  // Swaps the provider of an already registered type (the runtime binds the sim
  // provider to the scenario it plays); NotFound when the type is not registered.
  Status Replace(ConnectorProvider provider);

  // Null when `type` is not registered.
  const ConnectorProvider* Find(const std::string& type) const;
  std::vector<std::string> Types() const;  // sorted
  // Problems of `spec` by its provider's check (unknown fields included); one problem
  // on spec.connector.type, listing the known types, when the type is unknown.
  std::vector<model::ConnectorProblem> Check(const model::ConnectorSpec& spec) const override;

  // Whether the cluster's provider runs on the controller's clock (capabilities).
  // False for a type this registry does not have.
  bool RunsOnVirtualTime(const model::Cluster& cluster) const;
  // Every one of `clusters` does (the runtime's and `plan --state`'s choice of clock).
  bool AllRunOnVirtualTime(const std::vector<model::Cluster>& clusters) const;

  // Creates the connector for `cluster.connector.type` after its provider checked the
  // block (InvalidArgument with each problem's file:line otherwise). The cluster's
  // qps/burst is enforced once: by a wrapping limiter, unless the provider paces its
  // own requests. A `ctx.read_only` connector is wrapped with a guard whose Apply fails
  // (FailedPrecondition) without reaching it. NotFound for an unknown type.
  Result<std::unique_ptr<Connector>> Create(const model::Cluster& cluster, const FactoryContext& ctx) const;

  // The `$defs` of schemas/cluster.schema.json that describe spec.connector: "connector"
  // (the type, the shared fields, and one `if type == X then` per provider) and one
  // "connector-X" per provider. tests/docs checks the published file against it.
  nlohmann::json ConnectorSchemaDefs() const;

 private:
  std::map<std::string, ConnectorProvider> providers_;
};

}  // namespace gpufed::connectors
