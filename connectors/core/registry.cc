#include "connectors/core/registry.h"

#include "connectors/core/connector_fields.h"
#include "connectors/core/rate_limit.h"
#include "controller/common/text.h"

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

// The schema of the fields every provider shares (model::kConnectorSharedKeys but type).
nlohmann::json SharedFieldSchemas() {
  return {
      {"timeout",
       {{"description", "Time limit of one call to the cluster (e.g. 10s)."},
        {"$ref", "common.schema.json#/$defs/duration"}}},
      {"qps",
       {{"description",
         "Maximum requests per second to the cluster, enforced once per cluster. Greater than 0, at most 1000000."},
        {"type", "number"},
        {"exclusiveMinimum", 0},
        {"maximum", 1000000}}},
      {"burst",
       {{"description", "Maximum burst of requests above qps. 1 to 1000000."},
        {"type", "integer"},
        {"minimum", 1},
        {"maximum", 1000000}}},
  };
}

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

Status ConnectorRegistry::Register(ConnectorProvider provider) {
  if (provider.type.empty() || !provider.factory)
    return InvalidArgument("a connector provider needs a type and a factory");
  if (providers_.count(provider.type)) {
    return {StatusCode::kAlreadyExists, "connector type " + provider.type + " already registered"};
  }
  std::string type = provider.type;
  providers_.emplace(std::move(type), std::move(provider));
  return Status::Ok();
}

Status ConnectorRegistry::Register(const std::string& type, Factory factory) {
  ConnectorProvider provider;
  provider.type = type;
  provider.factory = std::move(factory);
  return Register(std::move(provider));
}

Status ConnectorRegistry::Replace(ConnectorProvider provider) {
  auto it = providers_.find(provider.type);
  if (it == providers_.end()) return NotFound("connector type " + provider.type + " is not registered");
  if (!provider.factory) return InvalidArgument("a connector provider needs a factory");
  it->second = std::move(provider);
  return Status::Ok();
}

const ConnectorProvider* ConnectorRegistry::Find(const std::string& type) const {
  auto it = providers_.find(type);
  return it == providers_.end() ? nullptr : &it->second;
}

std::vector<std::string> ConnectorRegistry::Types() const {
  std::vector<std::string> out;
  out.reserve(providers_.size());
  for (const auto& [type, provider] : providers_) out.push_back(type);
  return out;
}

std::vector<model::ConnectorProblem> ConnectorRegistry::Check(const model::ConnectorSpec& spec) const {
  const ConnectorProvider* provider = Find(spec.type);
  if (provider == nullptr) {
    const std::vector<std::string> types = Types();
    const std::vector<std::string_view> names(types.begin(), types.end());
    const std::string best = ClosestMatch(spec.type, names);
    return {{"spec.connector.type", spec.location,
             "unknown connector type '" + spec.type + "'" + (best.empty() ? "" : " (did you mean '" + best + "'?)") +
                 "; this build has " + Join(types, ", ")}};
  }
  if (provider->check) return provider->check(spec);
  return ConnectorFieldReader(spec, {}).problems();  // no fields of its own: every one is unknown
}

bool ConnectorRegistry::RunsOnVirtualTime(const model::Cluster& cluster) const {
  const ConnectorProvider* provider = Find(cluster.connector.type);
  return provider != nullptr && provider->capabilities.virtual_time;
}

bool ConnectorRegistry::AllRunOnVirtualTime(const std::vector<model::Cluster>& clusters) const {
  for (const model::Cluster& c : clusters) {
    if (!RunsOnVirtualTime(c)) return false;
  }
  return true;
}

Result<std::unique_ptr<Connector>> ConnectorRegistry::Create(const model::Cluster& cluster,
                                                             const FactoryContext& ctx) const {
  const std::string& name = cluster.metadata.name;
  const ConnectorProvider* provider = Find(cluster.connector.type);
  if (provider == nullptr) {
    return NotFound("cluster " + name + ": no connector of type " + cluster.connector.type + " in this build");
  }
  // The loader checked the block when it had this registry; a Cluster built otherwise
  // (a load without one, a test) is checked here, before the factory reads it.
  if (Status checked = ProblemsToStatus(Check(cluster.connector)); !checked.ok()) {
    return Status(checked.code(), "cluster " + name + ": " + checked.message());
  }
  Result<std::unique_ptr<Connector>> inner = provider->factory(cluster, ctx);
  if (!inner.ok()) return Status(inner.status().code(), "cluster " + name + ": " + inner.status().message());
  std::unique_ptr<Connector> made = std::move(inner).value();
  if (ctx.read_only) made = std::make_unique<ObserveOnlyConnector>(std::move(made), name);
  if (provider->capabilities.paces_requests) return made;  // its client's token bucket is the one limit
  return std::unique_ptr<Connector>(
      std::make_unique<RateLimitedConnector>(std::move(made), cluster.connector.qps, cluster.connector.burst));
}

nlohmann::json ConnectorRegistry::ConnectorSchemaDefs() const {
  const std::vector<std::string> types = Types();
  std::string described = "Connector type, one of the providers of this build:";
  for (const auto& [type, provider] : providers_) {
    described += " " + type + (provider.summary.empty() ? "" : " (" + provider.summary + ")") + ",";
  }
  described.back() = '.';
  // The block is dispatched on its type: each provider's fragment is a closed object
  // (additionalProperties: false), so a wrong field is reported on that field alone.
  nlohmann::json dispatch = nlohmann::json::array();
  nlohmann::json defs = nlohmann::json::object();
  for (const auto& [type, provider] : providers_) {
    const std::string def = "connector-" + type;
    dispatch.push_back({
        {"if", {{"type", "object"}, {"properties", {{"type", {{"const", type}}}}}, {"required", {"type"}}}},
        {"then", {{"$ref", "#/$defs/" + def}}},
    });
    nlohmann::json properties = {{"type", {{"description", "Connector type: " + type + "."}, {"const", type}}}};
    properties.update(SharedFieldSchemas());
    properties.update(provider.schema_properties);
    defs[def] = {{"type", "object"}, {"additionalProperties", false}, {"properties", properties}};
  }
  // A type no provider has: the one error is on `type`, listing the known ones.
  const nlohmann::json known = {{"description", described}, {"enum", types}};
  dispatch.push_back({
      {"if", {{"type", "object"}, {"properties", {{"type", {{"enum", types}}}}}}},
      {"else", {{"type", "object"}, {"properties", {{"type", known}}}}},
  });
  defs["connector"] = {{"type", "object"}, {"required", {"type"}}, {"allOf", dispatch}};
  return defs;
}

}  // namespace gpufed::connectors
