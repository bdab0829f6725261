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
  if (!std::filesystem::exists(db, ec))
    return NotFound("no controller state in " + options.state_dir + " (no gpufed.db)");
  // Read-only, as is everything below: the folder may be a live controller's, or a copy
  // an operator wants left as it is (no migration, no ledger repair, no file made).
  Result<std::unique_ptr<store::Store>> store = store::Store::OpenReadOnly(db);
  if (!store.ok()) return Status(store.status().code(), db + ": " + store.status().message());
  const bool all_sim = registry.AllRunOnVirtualTime(revision.config.clusters);
  // A virtual-time run continues from the clock it reached (as `gpufed run` does).
  gpufed::ManualClock virtual_clock;
  gpufed::SystemClock wall_clock;
  if (all_sim) {
    Result<std::optional<Duration>> saved = (*store)->GetMetaMillis("clock_ms");
    if (!saved.ok()) return Status(saved.status().code(), db + ": " + saved.status().message());
    if (*saved) virtual_clock.AdvanceTo(**saved);
  }
  const gpufed::Clock* clock = all_sim ? static_cast<const gpufed::Clock*>(&virtual_clock) : &wall_clock;
  NoDecisionLog log;
  Reconciler reconciler(store->get(), &log, clock);
  reconciler.SetRevision(&revision);
  Result<ConnectorSet::Prepared> made = reconciler.PrepareConnectors(
      revision, RegistryMaker(registry, clock, options.state_dir, ConnectorAccess::kReadOnly));
  if (!made.ok()) return made.status();
  (void)reconciler.CommitConnectors(std::move(made).value());
  // The tenants' past use as the stopped or running controller last saved it (read only:
  // the ledger is saved by passes, and Preview runs none).
  GPUFED_RETURN_IF_ERROR(reconciler.RestoreFairShare());
  return reconciler.Preview();
}

}  // namespace gpufed::reconcile
