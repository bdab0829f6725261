// The `gpufed` strategy of the Philly replay is the product: the window becomes a
// repository (philly_repo.h), and the real runtime (`gpufed run` without its CLI) plays
// it with sim connectors in virtual time: reconcile loop, store, audit journal, budgets,
// fair share, bursting. The schedule is read back from the store's metered attempts.
#include <cstdlib>

#include <chrono>
#include <filesystem>
#include <map>

#include "bench/replay/philly_repo.h"
#include "bench/replay/philly_sim.h"
#include "connectors/core/registry.h"
#include "connectors/sim/sim_connector.h"
#include "controller/audit/env.h"
#include "controller/audit/query.h"
#include "controller/runtime/app.h"

namespace gpufed::replay {
namespace {

// A state folder of its own when the caller gives none; removed when the run ends.
class StateFolder {
 public:
  static Result<StateFolder> Make(const std::string& wanted) {
    StateFolder f;
    if (!wanted.empty()) {
      f.path_ = wanted;
      return f;
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/gpufed-philly-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) return Unavailable("cannot create a temporary state folder");
    f.path_ = pattern;
    f.owned_ = true;
    return f;
  }
  StateFolder(StateFolder&& o) noexcept : path_(std::move(o.path_)), owned_(o.owned_) { o.owned_ = false; }
  StateFolder& operator=(StateFolder&&) = delete;
  ~StateFolder() {
    std::error_code ec;
    if (owned_) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  StateFolder() = default;
  std::string path_;
  bool owned_ = false;
};

// Reports jobs started so far, at most every 200 ms of wall time (a store aggregate).
class ProgressView : public runtime::AppView {
 public:
  ProgressView(const PhillyProgress& progress, size_t total) : progress_(progress), total_(total) {}
  void Event(Duration, const std::string&) override {}
  void Update(reconcile::Controller& controller, Duration, bool force) override {
    if (!progress_) return;
    const auto now = std::chrono::steady_clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    Result<std::vector<store::StateCount>> counts = controller.store()->CountByState();
    if (!counts.ok()) return;
    int64_t started = 0;
    for (const store::StateCount& c : *counts) {
      if (!store::IsWaiting(c.state) && c.state != store::WorkloadState::kPlaced) started += c.workloads;
    }
    progress_("gpufed", static_cast<size_t>(started), total_);
  }

 private:
  const PhillyProgress& progress_;
  size_t total_;
  std::chrono::steady_clock::time_point last_{};
};

Result<int64_t> CountRecords(const std::string& audit_dir, const std::string& kind) {
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  audit::QueryFilter filter;
  filter.kind = kind;
  int64_t n = 0;
  GPUFED_RETURN_IF_ERROR(audit::ScanRecords(*env, audit_dir, filter, [&](const nlohmann::json&) { ++n; }));
  return n;
}

}  // namespace

Result<StrategyRun> RunGpufed(const std::vector<PhillyJob>& jobs, const PhillySetup& setup,
                              const PhillyProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  Result<StateFolder> folder = StateFolder::Make(setup.state_dir);
  if (!folder.ok()) return folder.status();
  const std::string repo = folder->path() + "/repo";
  GPUFED_RETURN_IF_ERROR(WritePhillyRepository(repo, jobs, setup));

  connectors::ConnectorRegistry registry;
  GPUFED_RETURN_IF_ERROR(connectors::sim::RegisterSimConnector(registry));
  runtime::AppOptions options;
  options.config_dir = repo;
  options.state_dir = folder->path();
  options.until_idle = true;
  options.handle_signals = false;
  options.durability = setup.durable ? Durability::kSynced : Durability::kUnsynced;
  options.build.version = "gpufed-replay";
  options.reconcile.fair_share_half_life = setup.half_life;
  // The window plus the longest job, with room to spare: --until-idle ends the run.
  options.max_time = Duration::FromSeconds(int64_t{365} * 24 * 3600);
  // Checkpoints in virtual time: hourly keeps a week's journal to ~200 of them.
  options.checkpoint_interval = Duration::FromSeconds(3600);
  ProgressView view(progress, jobs.size());
  Result<std::unique_ptr<runtime::App>> rt = runtime::App::Open(options, registry, &view);
  if (!rt.ok()) return Status(rt.status().code(), "gpufed runtime: " + rt.status().message());
  if (int code = (*rt)->Run(); code != 0) return Internal("gpufed runtime exited with " + std::to_string(code));

  StrategyRun run;
  run.strategy = "gpufed";
  run.plans = (*rt)->controller().pass_stats().passes;
  Result<std::vector<store::AttemptRow>> attempts = (*rt)->controller().store()->Attempts();
  if (!attempts.ok()) return attempts.status();
  std::map<std::string, const store::AttemptRow*> succeeded;
  for (const store::AttemptRow& a : *attempts) {
    if (a.outcome == "succeeded") succeeded[a.workload] = &a;
  }
  run.jobs.resize(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    JobRun& r = run.jobs[j];
    r.job = &jobs[j];
    r.gpus = ShapeOf(jobs[j].gpus).total();
    auto it = succeeded.find(PhillyWorkloadName(jobs[j]));
    if (it == succeeded.end()) continue;  // never ran to completion
    r.start_ms = it->second->started.millis();
    r.end_ms = it->second->finished.millis();
    r.cloud = it->second->cloud;
  }
  (*rt).reset();  // closes the store and the journal before they are read or removed
  Result<int64_t> alerts = CountRecords(folder->path() + "/audit", "budget-alert");
  if (!alerts.ok()) return alerts.status();
  run.alerts = *alerts;
  if (progress) progress(run.strategy, jobs.size(), jobs.size());
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

}  // namespace gpufed::replay
