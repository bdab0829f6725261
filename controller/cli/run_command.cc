// gpufed run --config DIR [--state DIR] [--listen ADDR:PORT] [--until-idle]: the controller.
// While it runs it ships the journal to every AuditSink of the active revision, and at
// exit it waits (up to --drain-timeout) until each holds every record.
//
// With only `sim` clusters the run is in accelerated virtual time: the loop jumps the
// clock to the next event (a job ends, a node arrives, a failure, a submission, a
// backoff, or the resync period), so a day of cluster time takes seconds. With any real
// connector (`local`) it runs on the wall clock.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include "connectors/core/clock.h"
#include "controller/audit/env.h"
#include "controller/audit/live_shipping.h"
#include "controller/cli/commands.h"
#include "controller/cli/run_view.h"
#include "controller/cli/stop_signals.h"
#include "controller/cli/version.h"
#include "controller/config/loader.h"
#include "controller/reconcile/controller.h"
#include "controller/reconcile/watcher.h"
#include "controller/server/server.h"

namespace gpufed::cli {
namespace {

struct RunOptions {
  std::string config_dir;
  std::string state_dir = "gpufed-state";
  std::string listen;
  bool until_idle = false;
  std::string scenario;        // default: <config>/simulation/scenario.yaml when present
  double speed = -1;           // virtual seconds per wall second; 0 = as fast as possible
  std::string tokens_file;
  std::string tls_cert;
  std::string tls_key;
  std::string max_time = "30d";
  std::string resync = "5m";
  std::string drain_timeout = "60s";
  std::string checkpoint_interval = "30s";
};

// Ships the journal to the active revision's AuditSinks for as long as it lives; restarted
// (from the durable cursors) when a new revision changes the sinks.
class RunShipping {
 public:
  RunShipping(reconcile::Controller& controller, audit::Env* env, std::string audit_dir)
      : controller_(controller), env_(env), audit_dir_(std::move(audit_dir)) {}
  ~RunShipping() { Reset(); }

  Status Follow(const std::vector<model::AuditSink>& sinks) {
    if (live_ && live_->Ships(sinks)) return Status::Ok();
    Reset();
    if (sinks.empty()) return Status::Ok();
    audit::LiveShippingOptions o;
    o.env = env_;
    o.audit_dir = audit_dir_;
    o.repo_root = controller_.repo_root();
    o.durable_head = [c = &controller_] { return c->audit_head(); };
    Result<std::unique_ptr<audit::LiveShipping>> started = audit::LiveShipping::Start(o, sinks);
    if (!started.ok()) return started.status();
    live_ = std::move(started).value();
    controller_.AttachShipping(live_.get());
    return Status::Ok();
  }
  audit::LiveShipping* live() { return live_.get(); }

 private:
  void Reset() {
    if (!live_) return;
    controller_.AttachShipping(nullptr);
    live_.reset();
  }
  reconcile::Controller& controller_;
  audit::Env* env_;
  std::string audit_dir_;
  std::unique_ptr<audit::LiveShipping> live_;
};

bool AllSim(const std::string& dir) {
  config::LoadResult loaded = config::LoadRepository({dir});
  for (const model::Cluster& c : loaded.config.clusters) {
    if (c.connector.type != model::ConnectorType::kSim) return false;
  }
  return true;
}

int Run(RunOptions o, const connectors::ConnectorRegistry* registry) {
  if (registry == nullptr) {
    std::cerr << "gpufed run: no connectors registered in this binary\n";
    return 1;
  }
  Result<Duration> max_time = Duration::Parse(o.max_time);
  Result<Duration> resync = Duration::Parse(o.resync);
  Result<Duration> drain_timeout = Duration::Parse(o.drain_timeout);
  Result<Duration> checkpoint_interval = Duration::Parse(o.checkpoint_interval);
  if (!max_time.ok() || !resync.ok() || !drain_timeout.ok() || !checkpoint_interval.ok() ||
      checkpoint_interval->millis() <= 0) {
    std::cerr << "gpufed run: bad --max-time, --resync, --drain-timeout or --checkpoint-interval\n";
    return 2;
  }
  if (o.scenario.empty()) {
    std::string guess = o.config_dir + "/simulation/scenario.yaml";
    if (std::filesystem::exists(guess)) o.scenario = guess;
  }
  bool tty = isatty(STDOUT_FILENO) != 0;
  bool virtual_time = AllSim(o.config_dir);
  if (o.speed < 0) o.speed = tty ? 7200 : 0;
  connectors::ManualClock virtual_clock;
  connectors::SystemClock wall_clock;
  const connectors::Clock* clock = virtual_time ? static_cast<const connectors::Clock*>(&virtual_clock) : &wall_clock;

  reconcile::ControllerOptions options;
  options.config_dir = o.config_dir;
  options.state_dir = o.state_dir;
  options.scenario = o.scenario;
  options.version = kVersion;
  options.checkpoint_interval = *checkpoint_interval;
  std::error_code ec;
  std::filesystem::create_directories(o.state_dir, ec);
  // A restarted virtual-time run continues from the clock it had reached.
  if (virtual_time) {
    Result<std::unique_ptr<store::Store>> peek = store::Store::Open(o.state_dir + "/gpufed.db");
    if (peek.ok()) {
      Result<std::optional<std::string>> saved = (*peek)->GetMeta("clock_ms");
      if (saved.ok() && *saved) virtual_clock.AdvanceTo(Duration::FromMillis(std::stoll(**saved)));
    }
  }
  Result<std::unique_ptr<reconcile::Controller>> opened = reconcile::Controller::Open(options, *registry, clock);
  if (!opened.ok()) {
    std::cerr << "gpufed run: " << opened.status().message() << "\n";
    return 1;
  }
  reconcile::Controller& controller = **opened;
  std::unique_ptr<audit::Env> shipping_env = audit::NewPosixEnv();
  RunShipping shipping(controller, shipping_env.get(), o.state_dir + "/audit");
  if (Status s = shipping.Follow(controller.AuditSinks()); !s.ok()) {
    std::cerr << "gpufed run: audit shipping: " << s.ToString() << "\n";
    (void)controller.Stop("audit shipping could not start");
    return 1;
  }
  std::unique_ptr<server::ApiServer> api;
  if (!o.listen.empty()) {
    Result<server::ServerOptions> so = server::MakeServerOptions(o.listen, o.tokens_file, o.tls_cert, o.tls_key, o.state_dir);
    if (!so.ok()) {
      std::cerr << "gpufed run: " << so.status().message() << "\n";
      return 2;
    }
    Result<std::unique_ptr<server::ApiServer>> started = server::ApiServer::Start(&controller, *so);
    if (!started.ok()) {
      std::cerr << "gpufed run: " << started.status().message() << "\n";
      return 1;
    }
    api = std::move(started).value();
    std::cerr << "gpufed run: API on " << (so->tls_cert.empty() ? "http" : "https") << "://" << so->host << ":"
              << api->port() << "\n";
  }
  reconcile::RepoWatcher watcher(o.config_dir);
  RunView view(std::cout, tty, !virtual_time);
  std::cout << "gpufed run: " << o.config_dir << " revision " << controller.active_revision().substr(0, 12)
            << (virtual_time ? ", virtual time" : ", wall clock") << (o.scenario.empty() ? "" : ", scenario " + o.scenario)
            << "\n";
  auto wall_start = std::chrono::steady_clock::now();
  Duration start = clock->Now();
  std::map<std::string, bool> healthy;
  std::map<std::string, std::string> apis;  // the API each cluster was last seen speaking
  bool audit_ok = true;
  int exit_code = 0;
  StopSignals signals;
  std::string stop_reason = "shutdown";
  while (true) {
    if (watcher.Changed()) {
      Status s = controller.Reload();
      view.Event(clock->Now(), s.ok() ? "policy revision " + controller.active_revision().substr(0, 12) + " activated"
                                      : s.message());
      if (s.ok()) {
        // Sinks the new revision adds, changes or removes: restart from the cursors.
        if (Status shipped = shipping.Follow(controller.AuditSinks()); !shipped.ok()) {
          view.Event(clock->Now(), "audit shipping: " + shipped.ToString());
          std::cerr << "gpufed run: audit shipping: " << shipped.ToString() << "\n";
        }
      }
    }
    Result<reconcile::PassStats> stats = controller.Pass();
    Duration now = clock->Now();
    if (!stats.ok()) {
      view.Event(now, "pass failed: " + stats.status().ToString());
      if (stats.status().code() != StatusCode::kUnavailable) {
        exit_code = 1;
        break;
      }
    } else {
      if (stats->requeued > 0) view.Event(now, std::to_string(stats->requeued) + " workload(s) requeued");
      if (stats->preempted > 0) view.Event(now, std::to_string(stats->preempted) + " workload(s) preempted");
    }
    for (const std::string& notice : controller.TakeNotices()) {
      view.Event(now, notice);
      std::cerr << "gpufed run: " << notice << "\n";
    }
    Status audit = controller.audit_health();
    if (audit.ok() != audit_ok) {
      audit_ok = audit.ok();
      std::string line = audit_ok ? "audit journal writable again, placing resumed"
                                  : "audit journal cannot be written, placement stopped (not ready): " + audit.ToString();
      view.Event(now, line);
      std::cerr << "gpufed run: " << line << "\n";
    }
    for (const auto& c : controller.Clusters()) {
      std::string name = c.value("name", "");
      // "onprem-slurm: slurmrestd API v0.0.42 (Slurm 24.11.5)" when a connector connects
      // (or reconnects to another version).
      std::string api = c.value("api", "");
      if (!api.empty() && apis[name] != api) {
        apis[name] = api;
        view.Event(now, name + ": " + api);
        std::cerr << "gpufed run: " << name << ": " << api << "\n";
      }
      bool h = c.value("healthy", false) || !c.value("observed", false);
      if (healthy.count(name) && healthy[name] != h) {
        view.Event(now, "cluster " + name + (h ? " is healthy again" : " is unhealthy: " + c.value("last_error", "")));
      }
      healthy[name] = h;
    }
    view.Update(controller, now);
    if (virtual_time) (void)controller.store()->SetMeta("clock_ms", std::to_string(now.millis()));
    if (int signal = signals.requested()) {
      stop_reason = StopSignals::Name(signal);
      view.Event(now, stop_reason + ": the pass finished; stopping (a second signal exits at once)");
      break;
    }
    if (o.until_idle && controller.Idle()) break;
    if (o.until_idle && controller.Stuck()) {
      view.Event(now, "nothing running and nothing left to happen: the waiting workloads cannot be placed");
      break;
    }
    if (now.millis() - start.millis() > max_time->millis()) {
      view.Event(now, "--max-time reached");
      break;
    }
    Duration next = controller.NextEvent();
    Duration limit = now + *resync;
    if (next.millis() == 0 || next > limit) next = limit;
    if (virtual_time) {
      if (o.speed > 0) {
        double wall = (next.millis() - now.millis()) / 1000.0 / o.speed;
        std::this_thread::sleep_for(std::chrono::duration<double>(std::min(wall, 0.25)));
      }
      virtual_clock.AdvanceTo(next);
    } else {
      // Sleep in short steps so a stop signal is acted on within ~100 ms.
      int64_t ms = std::clamp<int64_t>(next.millis() - now.millis(), 10, 1000);
      for (int64_t slept = 0; slept < ms && !signals.requested(); slept += 100) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(100, ms - slept)));
      }
    }
  }
  if (api) api->Stop();  // no request reaches a stopping controller
  // Closing records: controller-stop and a final signed checkpoint, before the summary.
  if (Status stopped = controller.Stop(stop_reason); !stopped.ok()) {
    std::cerr << "gpufed run: closing the audit journal: " << stopped.ToString() << "\n";
    exit_code = 1;
  }
  // Every record, the closing ones included, reaches every sink before the exit.
  if (audit::LiveShipping* live = shipping.live()) {
    const uint64_t head = controller.audit_head();
    std::vector<std::string> behind = live->WaitAcknowledged(head, drain_timeout->millis() * 1000, nullptr);
    if (behind.empty()) {
      std::cerr << "gpufed run: audit sinks hold every record (seq " << head << ")\n";
    } else {
      std::string names;
      for (const std::string& n : behind) names += (names.empty() ? "" : ", ") + n;
      std::cerr << "gpufed run: audit sinks still behind after --drain-timeout " << o.drain_timeout << ": " << names
                << " (they resume from their cursors at the next start)\n";
      if (o.until_idle && signals.requested() == 0) exit_code = 1;
    }
  }
  view.Update(controller, clock->Now(), true);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  config::LoadResult cfg = config::LoadRepository({o.config_dir});
  std::cout << RenderSummary(controller, cfg.config, Duration::FromMillis(clock->Now().millis() - start.millis()), wall);
  return exit_code;
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run the controller: reconcile loop, connectors and (with --listen) the API");
  cmd->add_option("-c,--config", o->config_dir, "Policy repository directory")->required();
  cmd->add_option("--state", o->state_dir, "State folder: store, journal, connector ledgers")->capture_default_str();
  cmd->add_option("--listen", o->listen, "Serve the HTTP API on ADDR:PORT (port 0: any free port)");
  cmd->add_flag("--until-idle", o->until_idle, "Exit 0 once nothing is pending or running");
  cmd->add_option("--scenario", o->scenario, "Simulation scenario (default: <config>/simulation/scenario.yaml)");
  cmd->add_option("--speed", o->speed, "Virtual seconds per wall second (0: as fast as possible)");
  cmd->add_option("--tokens", o->tokens_file, "API tokens file: lines 'TOKEN TENANT' or 'TOKEN admin'");
  cmd->add_option("--tls-cert", o->tls_cert, "Serve HTTPS with this certificate (PEM)");
  cmd->add_option("--tls-key", o->tls_key, "Private key of --tls-cert (PEM)");
  cmd->add_option("--max-time", o->max_time, "Stop after this much (virtual) time")->capture_default_str();
  cmd->add_option("--resync", o->resync, "Longest interval between passes")->capture_default_str();
  cmd->add_option("--drain-timeout", o->drain_timeout,
                  "At exit, how long to wait for the AuditSinks to acknowledge every record")
      ->capture_default_str();
  cmd->add_option("--checkpoint-interval", o->checkpoint_interval,
                  "Longest time between signed journal checkpoints while records are appended")
      ->capture_default_str();
  cmd->callback([o, exit_code, registry] { *exit_code = Run(*o, registry); });
}

}  // namespace gpufed::cli
