#include "connectors/core/registry.h"

#include "connectors/core/rate_limit.h"

namespace gpufed::connectors {
namespace {

// The one place a read-only connector's Apply is refused, whatever its type: a Slurm or
// Kubernetes connector would submit before it records, so its ledger cannot be the guard.
class ObserveOnlyConnector : public Connector {
 public:
  ObserveOnlyConnector(std::unique_ptr<Connector> inner, std::string cluster)
      : inner_(std::move(inner)), cluster_(std::move(cluster)) {}
  Result<Observation> Observe(const CallContext& ctx) override { return inner_->Observe(ctx); }
  Result<ApplyOutcome> Apply(const Action& action, const CallContext&) override {
    return FailedPrecondition("cluster " + cluster_ + ": the connector is read-only; " + ActionKindName(action.kind) +
                              " " + action.key + " was not applied");
  }

 private:
  std::unique_ptr<Connector> inner_;
  std::string cluster_;
};

}  // namespace

const char* RunStateName(RunState state) {
  switch (state) {
    case RunState::kStarting: return "starting";
    case RunState::kRunning: return "running";
    case RunState::kSucceeded: return "succeeded";
    case RunState::kFailed: return "failed";
    case RunState::kCancelled: return "cancelled";
    case RunState::kPreempted: return "preempted";
  }
  return "unknown";
}

Status ConnectorRegistry::Register(const std::string& type, Factory factory) {
  if (factories_.count(type)) return {StatusCode::kAlreadyExists, "connector type " + type + " already registered"};
  factories_[type] = std::move(factory);
  return Status::Ok();
}

Result<std::unique_ptr<Connector>> ConnectorRegistry::Create(const model::Cluster& cluster,
                                                             const FactoryContext& ctx) const {
  std::string type = model::ConnectorTypeName(cluster.connector.type);
  auto it = factories_.find(type);
  if (it == factories_.end()) {
    return NotFound("cluster " + cluster.metadata.name + ": no connector of type " + type + " in this build");
  }
  Result<std::unique_ptr<Connector>> inner = it->second(cluster, ctx);
  if (!inner.ok())
    return Status(inner.status().code(), "cluster " + cluster.metadata.name + ": " + inner.status().message());
  std::unique_ptr<Connector> made = std::move(inner).value();
  if (ctx.read_only) made = std::make_unique<ObserveOnlyConnector>(std::move(made), cluster.metadata.name);
  return std::unique_ptr<Connector>(
      std::make_unique<RateLimitedConnector>(std::move(made), cluster.connector.qps, cluster.connector.burst));
}

std::vector<std::string> ConnectorRegistry::Types() const {
  std::vector<std::string> out;
  out.reserve(factories_.size());
  for (const auto& [type, factory] : factories_) out.push_back(type);
  return out;
}

}  // namespace gpufed::connectors
