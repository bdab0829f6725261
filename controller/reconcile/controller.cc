#include "controller/reconcile/controller.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "connectors/sim/scenario.h"
#include "controller/config/loader.h"

namespace gpufed::reconcile {

using store::WorkloadRecord;

Result<std::unique_ptr<Controller>> Controller::Open(const ControllerOptions& options,
                                                     const connectors::ConnectorRegistry& registry,
                                                     const connectors::Clock* clock) {
  std::unique_ptr<Controller> c(new Controller(options, registry, clock));
  Status loaded = c->activator_.Reload({options.config_dir});
  if (!loaded.ok()) {
    std::string why;
    for (const std::string& p : c->activator_.last_rejection()) why += "\n  " + p;
    return FailedPrecondition("policy repository " + options.config_dir + " was not activated:" + why);
  }
  std::error_code ec;
  std::filesystem::create_directories(options.state_dir, ec);
  if (ec) return Unavailable("create " + options.state_dir + ": " + ec.message());
  Result<std::unique_ptr<store::Store>> store = store::Store::Open(options.state_dir + "/gpufed.db");
  if (!store.ok()) return store.status();
  c->store_ = std::move(store).value();
  c->log_ = std::make_unique<StoreDecisionLog>(c->store_.get());
  c->reconciler_ = std::make_unique<Reconciler>(c->store_.get(), c->log_.get(), clock, options.reconcile);
  c->reconciler_->SetRevision(c->activator_.active());
  GPUFED_RETURN_IF_ERROR(c->CreateConnectors());
  if (!options.scenario.empty()) {
    Result<connectors::sim::Scenario> scenario = connectors::sim::LoadScenario(options.scenario);
    if (!scenario.ok()) return scenario.status();
    for (const std::string& file : scenario->submissions) {
      config::LoadResult more = config::LoadRepository({file}, {}, &c->activator_.active()->config);
      if (!more.ok()) {
        std::string why;
        for (const auto& d : more.diagnostics.items()) why += "\n  " + d.ToString();
        return InvalidArgument("scenario submissions " + file + ":" + why);
      }
      for (model::Workload& w : more.config.workloads) {
        Result<std::optional<WorkloadRecord>> known = c->store_->Get(w.metadata.name);
        if (!known.ok()) return known.status();
        if (!*known) c->scenario_.push_back(w);
      }
      c->reconciler_->AddSpecs(std::move(more.config.workloads));
    }
    std::stable_sort(c->scenario_.begin(), c->scenario_.end(),
                     [](const model::Workload& a, const model::Workload& b) { return a.submitted_at > b.submitted_at; });
  }
  GPUFED_RETURN_IF_ERROR(c->reconciler_->SyncRepositoryWorkloads());
  return c;
}

Status Controller::CreateConnectors() {
  std::map<std::string, std::unique_ptr<connectors::Connector>> made;
  for (const model::Cluster& cluster : activator_.active()->config.clusters) {
    connectors::FactoryContext ctx;
    ctx.clock = clock_;
    ctx.state_dir = options_.state_dir + "/connectors/" + cluster.metadata.name;
    ctx.settings["sim.scenario"] = options_.scenario;
    Result<std::unique_ptr<connectors::Connector>> c = registry_.Create(cluster, ctx);
    if (!c.ok()) return c.status();
    made[cluster.metadata.name] = std::move(c).value();
  }
  reconciler_->SetConnectors(std::move(made));
  return Status::Ok();
}

Status Controller::Reload() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string before = activator_.active()->config.revision;
  Status s = activator_.Reload({options_.config_dir});
  if (!s.ok()) {
    std::string why;
    for (const std::string& p : activator_.last_rejection()) why += "; " + p;
    return FailedPrecondition("revision " + activator_.rejected_revision() + " rejected, " + before.substr(0, 12) +
                              " keeps serving" + why);
  }
  reconciler_->SetRevision(activator_.active());
  return reconciler_->SyncRepositoryWorkloads();
}

Result<PassStats> Controller::Pass() {
  std::lock_guard<std::mutex> lock(mu_);
  Duration now = clock_->Now();
  while (!scenario_.empty() && scenario_.back().submitted_at <= now) {
    const model::Workload& w = scenario_.back();
    WorkloadRecord r;
    r.name = w.metadata.name;
    r.uid = w.metadata.name + "-s" + std::to_string(w.submitted_at.millis());
    r.tenant = w.tenant;
    r.source = "scenario";
    r.submitted = w.submitted_at;
    r.gpu_milli = int64_t{w.resources.total_gpus()} * 1000;
    Status s = store_->Submit(r, now);
    if (!s.ok() && s.code() != StatusCode::kAlreadyExists) return s;
    scenario_.pop_back();
  }
  auto start = std::chrono::steady_clock::now();
  Result<PassStats> stats = reconciler_->Pass();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (pass_seconds_.size() < 100000) pass_seconds_.push_back(seconds);
  ++passes_;
  if (stats.ok()) {
    decisions_by_outcome_["placed"] += stats->placed;
    decisions_by_outcome_["queued"] += stats->queued;
    decisions_by_outcome_["rejected"] += stats->rejected;
    decisions_by_outcome_["preempted"] += stats->preempted;
  }
  return stats;
}

bool Controller::Idle() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!scenario_.empty()) return false;
  Result<std::vector<WorkloadRecord>> all = store_->List();
  if (!all.ok()) return false;
  for (const WorkloadRecord& r : *all) {
    if (!store::IsTerminal(r.state)) return false;
  }
  return true;
}

bool Controller::Stuck() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!scenario_.empty() || reconciler_->NextEvent().millis() > 0) return false;
  Result<std::vector<WorkloadRecord>> all = store_->List();
  if (!all.ok()) return false;
  for (const WorkloadRecord& r : *all) {
    if (store::IsActive(r.state) || r.state == store::WorkloadState::kPreempted) return false;
  }
  return true;
}

Duration Controller::NextEvent() {
  std::lock_guard<std::mutex> lock(mu_);
  Duration next = reconciler_->NextEvent();
  if (!scenario_.empty()) {
    Duration s = scenario_.back().submitted_at;
    if (next.millis() == 0 || s < next) next = s;
  }
  return next;
}

std::string Controller::active_revision() {
  std::lock_guard<std::mutex> lock(mu_);
  return activator_.active()->config.revision;
}

bool Controller::ready() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, cs] : reconciler_->clusters()) {
    if (cs.observed) return true;
  }
  return false;
}

}  // namespace gpufed::reconcile

namespace gpufed::reconcile {

std::pair<int64_t, double> Controller::pass_stats() {
  std::lock_guard<std::mutex> lock(mu_);
  double sum = 0;
  for (double s : pass_seconds_) sum += s;
  return {passes_, pass_seconds_.empty() ? 0 : sum / pass_seconds_.size()};
}

}  // namespace gpufed::reconcile
