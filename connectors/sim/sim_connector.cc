#include "connectors/sim/sim_connector.h"

#include "connectors/core/action_json.h"

namespace gpufed::connectors::sim {

SimConnector::SimConnector(const model::Cluster& cluster, std::vector<Failure> failures,
                           std::unique_ptr<ActionLedger> ledger)
    : sim_(cluster, std::move(failures)), ledger_(std::move(ledger)) {
  if (!ledger_) return;
  // Replay: the same actions at the same virtual times rebuild the same cluster.
  for (const LedgerRecord& r : ledger_->records()) {
    nlohmann::json j = nlohmann::json::parse(r.payload, nullptr, false);
    if (j.is_discarded()) continue;
    Result<Action> action = ActionFromJson(j);
    if (!action.ok()) continue;
    sim_.AdvanceTo(Duration::FromMillis(j.value("t", int64_t{0})));
    (void)ApplyToSim(*action);  // it succeeded when it was recorded
  }
}

Status SimConnector::ApplyToSim(const Action& action) {
  switch (action.kind) {
    case ActionKind::kSubmit: return sim_.Submit(action);
    case ActionKind::kCancel: return sim_.Stop(action, RunState::kCancelled);
    case ActionKind::kPreempt: return sim_.Stop(action, RunState::kPreempted);
  }
  return Internal("unknown action kind");
}

Result<Observation> SimConnector::Observe(const CallContext& ctx) {
  MutexLock lock(mu_);
  if (ctx.clock) sim_.AdvanceTo(ctx.clock->Now());
  if (sim_.down()) return Unavailable("cluster does not answer (simulated outage)");
  return sim_.Observe();
}

Result<ApplyOutcome> SimConnector::Apply(const Action& action, const CallContext& ctx) {
  MutexLock lock(mu_);
  if (broken_) return Unavailable("sim ledger is not writable");
  if (ctx.clock) sim_.AdvanceTo(ctx.clock->Now());
  if (sim_.down()) return Unavailable("cluster does not answer (simulated outage)");
  std::string kind = ActionKindName(action.kind);
  bool seen = ledger_ ? ledger_->Contains(kind, action.key) : seen_.count({kind, action.key}) > 0;
  if (seen) {
    ++duplicates_;
    return ApplyOutcome{true};
  }
  GPUFED_RETURN_IF_ERROR(ApplyToSim(action));
  if (ledger_) {
    nlohmann::json j = ActionToJson(action);
    j["t"] = sim_.now().millis();
    Status s = ledger_->Append({kind, action.key, j.dump()});
    if (!s.ok()) {
      broken_ = true;
      return Unavailable("sim ledger: " + s.message());
    }
  } else {
    seen_.insert({kind, action.key});
  }
  return ApplyOutcome{false};
}

int SimConnector::duplicates_suppressed() const {
  MutexLock lock(mu_);
  return duplicates_;
}

ConnectorProvider SimProvider(const std::shared_ptr<const Scenario>& scenario) {
  ConnectorProvider p;
  p.type = "sim";
  p.summary = "in-process simulated cluster";
  // It advances to the caller's clock on every call, so a federation of sim clusters
  // runs in accelerated virtual time; it simulates MIG slices and elastic nodes.
  p.capabilities = {.virtual_time = true, .mig = true, .elastic_nodes = true, .paces_requests = false};
  p.factory = [scenario](const model::Cluster& cluster,
                         const FactoryContext& ctx) -> Result<std::unique_ptr<Connector>> {
    std::vector<Failure> failures;
    if (scenario) failures = scenario->FailuresOf(cluster.metadata.name);
    // Written, not fsync'd: the ledger stands for the remote cluster's own memory, which
    // survives the controller's crash or kill -9 (the page cache does). After a power cut
    // a simulated cluster may have forgotten the last jobs it took, as a real cluster can,
    // and the loop requeues them; the controller's store and journal stay synced. One
    // fsync per simulated submit bounded a 1,000-cluster run's passes.
    Result<std::unique_ptr<ActionLedger>> ledger =
        ActionLedger::OpenInStateDir(ctx.state_dir, Durability::kUnsynced, ctx.ledger_access());
    if (!ledger.ok()) return ledger.status();
    return std::unique_ptr<Connector>(
        std::make_unique<SimConnector>(cluster, std::move(failures), std::move(ledger).value()));
  };
  return p;
}

Status RegisterSimConnector(ConnectorRegistry& registry) { return registry.Register(SimProvider()); }

}  // namespace gpufed::connectors::sim
