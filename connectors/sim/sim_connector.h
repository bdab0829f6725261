#pragma once
// The `sim` connector: a SimCluster behind the Connector interface, advanced to the
// caller's clock on every call. With a state folder it keeps an ActionLedger and
// rebuilds the simulated cluster from it on start, so a controller restart finds the
// cluster as it left it (the simulator's analogue of a real cluster that kept running).
#include <memory>
#include <set>

#include "connectors/core/ledger.h"
#include "connectors/core/registry.h"
#include "connectors/sim/scenario.h"
#include "connectors/sim/sim_cluster.h"
#include "controller/common/mutex.h"

namespace gpufed::connectors::sim {

class SimConnector : public Connector {
 public:
  // `ledger` may be null (no persistence).
  SimConnector(const model::Cluster& cluster, std::vector<Failure> failures, std::unique_ptr<ActionLedger> ledger);

  Result<Observation> Observe(const CallContext& ctx) override EXCLUDES(mu_);
  Result<ApplyOutcome> Apply(const Action& action, const CallContext& ctx) override EXCLUDES(mu_);

  // How many Apply calls repeated an already-applied key (for tests and reports).
  int duplicates_suppressed() const EXCLUDES(mu_);

 private:
  Status ApplyToSim(const Action& action) REQUIRES(mu_);

  mutable Mutex mu_;
  SimCluster sim_ GUARDED_BY(mu_);
  std::unique_ptr<ActionLedger> ledger_ PT_GUARDED_BY(mu_);
  std::set<std::pair<std::string, std::string>> seen_ GUARDED_BY(mu_);  // (kind, key) when no ledger
  int duplicates_ GUARDED_BY(mu_) = 0;
  bool broken_ GUARDED_BY(mu_) = false;  // a ledger write failed after the sim changed
};

// The "sim" provider. Its block has no fields of its own; `scenario` (may be null) holds
// the failures to inject, per cluster (the runtime binds the scenario it plays with
// ConnectorRegistry::Replace). With a FactoryContext state_dir, the ledger is
// <state_dir>/ledger.log (read, not written, for a read_only context: the replay
// rebuilds the cluster as the controller left it).
ConnectorProvider SimProvider(const std::shared_ptr<const Scenario>& scenario = nullptr);
// Registers SimProvider() without a scenario.
Status RegisterSimConnector(ConnectorRegistry& registry);

}  // namespace gpufed::connectors::sim
