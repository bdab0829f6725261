#include "connectors/core/registry.h"

#include "connectors/core/rate_limit.h"

namespace gpufed::connectors {

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

const char* ActionKindName(ActionKind kind) {
  switch (kind) {
    case ActionKind::kSubmit: return "submit";
    case ActionKind::kCancel: return "cancel";
    case ActionKind::kPreempt: return "preempt";
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
  if (!inner.ok()) return Status(inner.status().code(), "cluster " + cluster.metadata.name + ": " + inner.status().message());
  return std::unique_ptr<Connector>(std::make_unique<RateLimitedConnector>(std::move(inner).value(), cluster.connector.qps,
                                                                           cluster.connector.burst));
}

std::vector<std::string> ConnectorRegistry::Types() const {
  std::vector<std::string> out;
  for (const auto& [type, factory] : factories_) out.push_back(type);
  return out;
}

}  // namespace gpufed::connectors
