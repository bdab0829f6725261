#include "controller/runtime/runtime.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include "controller/common/secure_file.h"
#include "controller/config/loader.h"
#include "controller/runtime/stop_signals.h"
#include "policies/engine/validation.h"

namespace gpufed::runtime {

std::string DefaultScenarioFile(const std::string& config_dir) {
  std::string guess = config_dir + "/simulation/scenario.yaml";
  return std::filesystem::exists(guess) ? guess : "";
}

bool AllSimulated(const std::string& config_dir, const connectors::ConnectorRegistry& registry) {
  config::LoadResult loaded = config::LoadRepository({config_dir}, policy::ProductLoadOptions(&registry));
  return registry.AllRunOnVirtualTime(loaded.config.clusters);
}

Result<std::unique_ptr<Runtime>> Runtime::Open(RuntimeOptions options, const connectors::ConnectorRegistry& registry,
                                               RuntimeView* view) {
  if (options.scenario.empty()) options.scenario = DefaultScenarioFile(options.config_dir);
  // A public --metrics-listen is refused before anything starts.
  if (!options.metrics_listen.empty()) {
    if (Result<server::MetricsEndpoint> e = server::ParseMetricsListen(options.metrics_listen); !e.ok())
      return e.status();
  }
  std::unique_ptr<Runtime> rt(new Runtime(std::move(options)));
  const RuntimeOptions& o = rt->options_;
  rt->view_ = view;
  rt->virtual_time_ = AllSimulated(o.config_dir, registry);
  if (o.durability == Durability::kUnsynced && !rt->virtual_time_) {
    return FailedPrecondition("unsynced storage (--unsafe-no-fsync) is only for federations of simulated clusters; " +
                              o.config_dir + " declares a cluster whose connector is not sim");
  }
  rt->clock_ = o.clock != nullptr  ? o.clock
               : rt->virtual_time_ ? static_cast<const gpufed::Clock*>(&rt->virtual_clock_)
                                   : &rt->wall_clock_;
  // The state folder holds every spec's run.env, the signing key and the admin token:
  // created 0700, or narrowed to 0700 (and said so) when an older gpufed left it open.
  Result<std::optional<ModeChange>> state = MakePrivateFolder(o.state_dir);
  if (!state.ok()) return Status(state.status().code(), "state folder: " + state.status().message());
  if (state->has_value()) std::cerr << "gpufed run: " << (*state)->ToString() << "\n";
  // A restarted virtual-time run continues from the clock it had reached.
  if (rt->virtual_time_ && o.clock == nullptr) {
    Result<std::unique_ptr<store::Store>> peek = store::Store::Open(o.state_dir + "/gpufed.db");
    if (peek.ok()) {
      Result<std::optional<Duration>> saved = (*peek)->GetMetaMillis("clock_ms");
      if (!saved.ok()) return Status(saved.status().code(), "state folder: gpufed.db: " + saved.status().message());
      if (*saved) rt->virtual_clock_.AdvanceTo(**saved);
    }
  }
  if (!o.scenario.empty()) {
    config::LoadResult repo = config::LoadRepository({o.config_dir}, policy::ProductLoadOptions(&registry));
    Result<ScenarioSource> scenario = ScenarioSource::Load(o.scenario, repo.config);
    if (!scenario.ok()) return scenario.status();
    rt->scenario_ = std::move(scenario).value();
  }

  reconcile::ControllerOptions co;
  co.config_dir = o.config_dir;
  co.state_dir = o.state_dir;
  co.version = o.version;
  co.checkpoint_interval = o.checkpoint_interval;
  co.durability = o.durability;
  co.reconcile = o.reconcile;
  rt->registry_ = registry;
  GPUFED_RETURN_IF_ERROR(rt->scenario_.BindFailures(rt->registry_));
  Result<std::unique_ptr<reconcile::Controller>> opened = reconcile::Controller::Open(co, rt->registry_, rt->clock_);
  if (!opened.ok()) return opened.status();
  rt->controller_ = std::move(opened).value();
  rt->controller_->AddSourceSpecs(kScenarioSource, rt->scenario_.specs());

  rt->env_ = audit::NewPosixEnv();
  rt->shipping_ = std::make_unique<SinkShipping>(*rt->controller_, rt->env_.get(), o.state_dir + "/audit");
  if (Status s = rt->shipping_->Follow(rt->controller_->AuditSinks()); !s.ok()) {
    (void)rt->controller_->Stop("audit shipping could not start");
    return Status(s.code(), "audit shipping: " + s.message());
  }
  if (!o.listen.empty()) {
    Result<server::ServerOptions> so =
        server::MakeServerOptions(o.listen, o.tokens_file, o.tls_cert, o.tls_key, o.state_dir);
    if (!so.ok()) return so.status();
    so->max_body_bytes = o.max_body_bytes;
    Result<std::unique_ptr<server::ApiServer>> started = server::ApiServer::Start(rt->controller_.get(), *so);
    if (!started.ok()) return started.status();
    rt->api_ = std::move(started).value();
    std::cerr << "gpufed run: API on " << (so->tls_cert.empty() ? "http" : "https") << "://" << so->host << ":"
              << rt->api_->port() << "\n";
  }
  if (!o.metrics_listen.empty()) {
    Result<std::unique_ptr<server::MetricsServer>> metrics =
        server::MetricsServer::Start(rt->controller_.get(), o.metrics_listen);
    if (!metrics.ok()) return metrics.status();
    rt->metrics_ = std::move(metrics).value();
    std::cerr << "gpufed run: metrics (no token) on port " << rt->metrics_->port() << " of " << o.metrics_listen
              << "\n";
  }
  rt->watcher_ = std::make_unique<reconcile::RepoWatcher>(o.config_dir);
  return rt;
}

Runtime::~Runtime() {
  if (api_) api_->Stop();  // no request reaches a controller being torn down
  if (metrics_) metrics_->Stop();
  shipping_.reset();       // detaches from the controller before it goes
}

void Runtime::Event(Duration now, const std::string& line) {
  if (view_ != nullptr) view_->Event(now, line);
}

Result<reconcile::PassStats> Runtime::Step() {
  reconcile::Controller& c = *controller_;
  if (watcher_->Changed()) {
    Status s = c.Reload();
    Event(clock_->Now(), s.ok() ? "policy revision " + c.active_revision().substr(0, 12) + " activated" : s.message());
    if (s.ok()) {
      // Sinks the new revision adds, changes or removes: restart from the cursors.
      if (Status shipped = shipping_->Follow(c.AuditSinks()); !shipped.ok()) {
        Event(clock_->Now(), "audit shipping: " + shipped.ToString());
        std::cerr << "gpufed run: audit shipping: " << shipped.ToString() << "\n";
      }
    }
  }
  for (const model::Workload& w : scenario_.TakeDue(clock_->Now())) {
    GPUFED_RETURN_IF_ERROR(c.SubmitFromSource(w, kScenarioSource));
  }
  Result<reconcile::PassStats> stats = c.Pass();
  const Duration now = clock_->Now();
  if (!stats.ok()) {
    Event(now, "pass failed: " + stats.status().ToString());
  } else {
    if (stats->requeued > 0) Event(now, std::to_string(stats->requeued) + " workload(s) requeued");
    if (stats->preempted > 0) Event(now, std::to_string(stats->preempted) + " workload(s) preempted");
  }
  Report(now);
  // Commits with the next store write (a restart after a crash resumes a little earlier).
  if (virtual_time_) c.store()->SetMetaLater("clock_ms", std::to_string(now.millis()));
  return stats;
}

void Runtime::Report(Duration now) {
  reconcile::Controller& c = *controller_;
  for (const std::string& notice : c.TakeNotices()) {
    Event(now, notice);
    std::cerr << "gpufed run: " << notice << "\n";
  }
  Status audit = c.audit_health();
  if (audit.ok() != audit_ok_) {
    audit_ok_ = audit.ok();
    std::string line = audit_ok_
                           ? "audit journal writable again, placing resumed"
                           : "audit journal cannot be written, placement stopped (not ready): " + audit.ToString();
    Event(now, line);
    std::cerr << "gpufed run: " << line << "\n";
  }
  for (const auto& cluster : c.Clusters()) {
    std::string name = cluster.value("name", "");
    // "onprem-slurm: slurmrestd API v0.0.42 (Slurm 24.11.5)" when a connector connects
    // (or reconnects to another version).
    std::string api = cluster.value("api", "");
    if (!api.empty() && apis_[name] != api) {
      apis_[name] = api;
      std::string line = name;
      line += ": ";
      line += api;
      Event(now, line);
      std::cerr << "gpufed run: " << line << "\n";
    }
    bool h = cluster.value("healthy", false) || !cluster.value("observed", false);
    if (healthy_.count(name) && healthy_[name] != h) {
      Event(now, "cluster " + name + (h ? " is healthy again" : " is unhealthy: " + cluster.value("last_error", "")));
    }
    healthy_[name] = h;
  }
  if (view_ != nullptr) view_->Update(c, now, false);
}

bool Runtime::Idle() { return scenario_.done() && controller_->Idle(); }

bool Runtime::Stuck() { return scenario_.done() && controller_->Stuck(); }

Duration Runtime::NextEvent() {
  Duration next = controller_->NextEvent();
  Duration submission = scenario_.NextSubmission();
  if (!scenario_.done() && (next.millis() == 0 || submission < next)) next = submission;
  return next;
}

Status Runtime::Stop(const std::string& reason) {
  if (api_) api_->Stop();  // no request reaches a stopping controller
  Status stopped = controller_->Stop(reason);  // controller-stop and the final signed checkpoint
  // Every record, the closing ones included, reaches every sink before the exit.
  if (audit::LiveShipping* live = shipping_->live()) {
    const uint64_t head = controller_->audit_head();
    std::vector<std::string> behind = live->WaitAcknowledged(head, options_.drain_timeout.millis() * 1000, nullptr);
    if (behind.empty()) {
      std::cerr << "gpufed run: audit sinks hold every record (seq " << head << ")\n";
    } else {
      std::string names;
      for (const std::string& n : behind) names += (names.empty() ? "" : ", ") + n;
      std::string line = "audit sinks still behind after --drain-timeout " + options_.drain_timeout.ToString() + ": " +
                         names + " (they resume from their cursors at the next start)";
      std::cerr << "gpufed run: " << line << "\n";
      if (stopped.ok()) stopped = Status(StatusCode::kDeadlineExceeded, line);
    }
  }
  if (view_ != nullptr) view_->Update(*controller_, clock_->Now(), true);
  return stopped;
}

int Runtime::Run() {
  std::unique_ptr<StopSignals> signals = options_.handle_signals ? std::make_unique<StopSignals>() : nullptr;
  const Duration start = clock_->Now();
  int exit_code = 0;
  std::string stop_reason = "shutdown";
  auto signalled = [&] { return signals != nullptr && signals->requested() != 0; };
  while (true) {
    Result<reconcile::PassStats> stats = Step();
    const Duration now = clock_->Now();
    if (!stats.ok() && stats.status().code() != StatusCode::kUnavailable) {
      exit_code = 1;
      break;
    }
    if (signalled()) {
      stop_reason = StopSignals::Name(signals->requested());
      Event(now, stop_reason + ": the pass finished; stopping (a second signal exits at once)");
      break;
    }
    if (options_.until_idle && Idle()) break;
    if (options_.until_idle && Stuck()) {
      Event(now, "nothing running and nothing left to happen: the waiting workloads cannot be placed");
      break;
    }
    if (now.millis() - start.millis() > options_.max_time.millis()) {
      Event(now, "--max-time reached");
      break;
    }
    Duration next = NextEvent();
    const Duration limit = now + options_.resync;
    if (next.millis() == 0 || next > limit) next = limit;
    if (virtual_time_ && clock_ == &virtual_clock_) {
      if (options_.speed > 0) {
        double wall = (next.millis() - now.millis()) / 1000.0 / options_.speed;
        std::this_thread::sleep_for(std::chrono::duration<double>(std::min(wall, 0.25)));
      }
      virtual_clock_.AdvanceTo(next);
    } else {
      // Sleep in short steps so a stop signal is acted on within ~100 ms.
      int64_t ms = std::clamp<int64_t>(next.millis() - now.millis(), 10, 1000);
      for (int64_t slept = 0; slept < ms && !signalled(); slept += 100) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(100, ms - slept)));
      }
    }
  }
  Status stopped = Stop(stop_reason);
  if (!stopped.ok()) {
    // Sinks behind after a signal: the stop itself is clean, they resume at the next start.
    const bool only_sinks_behind = stopped.code() == StatusCode::kDeadlineExceeded;
    if (!only_sinks_behind) std::cerr << "gpufed run: closing the audit journal: " << stopped.ToString() << "\n";
    if (!only_sinks_behind || (options_.until_idle && !signalled())) exit_code = 1;
  }
  return exit_code;
}

}  // namespace gpufed::runtime
