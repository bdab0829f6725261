#include "controller/reconcile/preview.h"

#include <filesystem>

#include "controller/common/clock.h"
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
  gpufed::ManualClock virtual_clock;
  gpufed::SystemClock wall_clock;
  if (all_sim) {
    Result<std::optional<std::string>> saved = (*store)->GetMeta("clock_ms");
    if (saved.ok() && *saved) virtual_clock.AdvanceTo(Duration::FromMillis(std::stoll(**saved)));
  }
  const gpufed::Clock* clock = all_sim ? static_cast<const gpufed::Clock*>(&virtual_clock) : &wall_clock;
  NoDecisionLog log;
  Reconciler reconciler(store->get(), &log, clock);
  reconciler.SetRevision(&revision);
  Result<ConnectorSet::Prepared> made =
      reconciler.PrepareConnectors(revision, RegistryMaker(registry, clock, options.state_dir, options.connector_settings));
  if (!made.ok()) return made.status();
  (void)reconciler.CommitConnectors(std::move(made).value());
  // The tenants' past use as the stopped or running controller last saved it.
  GPUFED_RETURN_IF_ERROR(reconciler.RestoreFairShare());
  return reconciler.Preview();
}

}  // namespace gpufed::reconcile
