#include "controller/reconcile/preview.h"

#include <filesystem>

#include "connectors/core/clock.h"
#include "controller/reconcile/reconciler.h"
#include "controller/store/store.h"

namespace gpufed::reconcile {
namespace {

// Preview plans; it never decides anything durable.
class NoDecisionLog : public DecisionLog {
 public:
  Status Record(const placement::Decision&, const DecisionContext&) override { return Status::Ok(); }
};

}  // namespace

Result<placement::Plan> PreviewFromState(const policy::Revision& revision, const PreviewOptions& options,
                                         const connectors::ConnectorRegistry& registry) {
  const std::string db = options.state_dir + "/gpufed.db";
  std::error_code ec;
  if (!std::filesystem::exists(db, ec)) return NotFound("no controller state in " + options.state_dir + " (no gpufed.db)");
  Result<std::unique_ptr<store::Store>> store = store::Store::Open(db);
  if (!store.ok()) return store.status();
  bool all_sim = true;
  for (const model::Cluster& c : revision.config.clusters) all_sim = all_sim && c.connector.type == model::ConnectorType::kSim;
  // A virtual-time run continues from the clock it reached (as `gpufed run` does).
  connectors::ManualClock virtual_clock;
  connectors::SystemClock wall_clock;
  if (all_sim) {
    Result<std::optional<std::string>> saved = (*store)->GetMeta("clock_ms");
    if (saved.ok() && *saved) virtual_clock.AdvanceTo(Duration::FromMillis(std::stoll(**saved)));
  }
  const connectors::Clock* clock = all_sim ? static_cast<const connectors::Clock*>(&virtual_clock) : &wall_clock;
  NoDecisionLog log;
  Reconciler reconciler(store->get(), &log, clock);
  reconciler.SetRevision(&revision);
  std::map<std::string, std::unique_ptr<connectors::Connector>> made;
  for (const model::Cluster& cluster : revision.config.clusters) {
    connectors::FactoryContext ctx;
    ctx.clock = clock;
    ctx.state_dir = options.state_dir + "/connectors/" + cluster.metadata.name;
    ctx.settings = options.connector_settings;
    Result<std::unique_ptr<connectors::Connector>> c = registry.Create(cluster, ctx);
    if (!c.ok()) return Status(c.status().code(), "cluster " + cluster.metadata.name + ": " + c.status().message());
    made[cluster.metadata.name] = std::move(c).value();
  }
  reconciler.SetConnectors(std::move(made));
  // The tenants' past use as the stopped or running controller last saved it.
  GPUFED_RETURN_IF_ERROR(reconciler.RestoreFairShare());
  return reconciler.Preview();
}

}  // namespace gpufed::reconcile
