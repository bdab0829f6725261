#pragma once
// The controller process: what `gpufed run` is. A Runtime owns the clock (virtual for an
// all-sim federation, else the wall clock), the Controller, the HTTP API, the repository
// watcher, the shipping to every AuditSink, the simulation scenario (a workload source and
// the sim connectors' input) and the stop signals, and drives the loop. Tests use the
// same object, stepping it on a clock they own.
#include <map>
#include <memory>
#include <string>

#include "connectors/core/registry.h"
#include "controller/audit/env.h"
#include "controller/common/clock.h"
#include "controller/reconcile/controller.h"
#include "controller/reconcile/watcher.h"
#include "controller/runtime/scenario_source.h"
#include "controller/runtime/sink_shipping.h"
#include "controller/server/metrics_server.h"
#include "controller/server/server.h"

namespace gpufed::runtime {

struct RuntimeOptions {
  std::string config_dir;
  std::string state_dir = "gpufed-state";
  std::string scenario;          // sim scenario file; empty: DefaultScenarioFile(config_dir) if it exists
  std::string listen;            // ADDR:PORT for the API; empty: no API
  std::string tokens_file, tls_cert, tls_key;
  size_t max_body_bytes = size_t{1} << 20;  // API request bodies over this get 413
  std::string metrics_listen;     // ADDR:PORT (loopback or private) for /metrics without a token; empty: none
  bool until_idle = false;
  double speed = 0;              // virtual seconds per wall second; 0: as fast as possible
  Duration max_time = Duration::FromSeconds(30LL * 24 * 3600);
  Duration resync = Duration::FromSeconds(300);
  Duration drain_timeout = Duration::FromSeconds(60);
  Duration checkpoint_interval = Duration::FromSeconds(30);
  std::string version = "dev";
  reconcile::ReconcilerOptions reconcile;  // the loop's tuning (fair-share half-life, ...)
  bool handle_signals = true;    // SIGTERM/SIGINT stop the run gracefully
  // kUnsynced (`--unsafe-no-fsync`, the Philly replay's default): nothing waits for the
  // disk. Refused unless every cluster is simulated (common/durability.h).
  Durability durability = Durability::kSynced;
  // Tests: a clock they advance (and Step instead of Run). Null: the runtime's own.
  const gpufed::Clock* clock = nullptr;
};

// Where the run is shown (the CLI's live view); every call comes from the loop's thread.
class RuntimeView {
 public:
  virtual ~RuntimeView() = default;
  virtual void Event(Duration now, const std::string& line) = 0;
  virtual void Update(reconcile::Controller& controller, Duration now, bool force) = 0;
};

// `<config>/simulation/scenario.yaml`, which `gpufed run` and `gpufed plan --state` play
// when no --scenario is given.
std::string DefaultScenarioFile(const std::string& config_dir);
// True when every Cluster of the repository is simulated (the run is in virtual time).
bool AllSimulated(const std::string& config_dir, const connectors::ConnectorRegistry& registry);

class Runtime {
 public:
  // Everything is started here; errors name what could not start. `registry` and `view`
  // (may be null) must outlive the Runtime.
  static Result<std::unique_ptr<Runtime>> Open(RuntimeOptions options, const connectors::ConnectorRegistry& registry,
                                               RuntimeView* view);
  // Stops the API and the shipping; writes nothing to the journal (Run or Stop does).
  ~Runtime();

  // One iteration: reload a changed repository, submit the scenario's due workloads,
  // run one pass, report what changed.
  Result<reconcile::PassStats> Step();
  // Nothing waiting or running and nothing left to submit.
  bool Idle();
  // Nothing running and nothing to come: what waits can never be placed by time alone.
  bool Stuck();
  Duration NextEvent();
  // Steps until idle (--until-idle), a stop signal or --max-time, advancing virtual time
  // or sleeping on the wall clock; then Stop. Returns the process's exit code.
  int Run();
  // controller-stop and the final checkpoint, then waits (up to --drain-timeout) until
  // every sink holds every record. Non-OK names the sinks still behind.
  Status Stop(const std::string& reason);

  reconcile::Controller& controller() { return *controller_; }
  const gpufed::Clock& clock() const { return *clock_; }
  bool virtual_time() const { return virtual_time_; }
  const std::string& scenario_file() const { return scenario_.file(); }

 private:
  explicit Runtime(RuntimeOptions options) : options_(std::move(options)) {}
  void Report(Duration now);
  void Event(Duration now, const std::string& line);

  RuntimeOptions options_;
  RuntimeView* view_ = nullptr;
  bool virtual_time_ = false;
  gpufed::ManualClock virtual_clock_;
  gpufed::SystemClock wall_clock_;
  const gpufed::Clock* clock_ = nullptr;
  ScenarioSource scenario_;
  // Main's providers with the sim one bound to the scenario's failures; outlives controller_.
  connectors::ConnectorRegistry registry_;
  std::unique_ptr<audit::Env> env_;
  std::unique_ptr<reconcile::Controller> controller_;
  std::unique_ptr<SinkShipping> shipping_;
  std::unique_ptr<server::ApiServer> api_;
  std::unique_ptr<server::MetricsServer> metrics_;
  std::unique_ptr<reconcile::RepoWatcher> watcher_;
  std::map<std::string, bool> healthy_;        // per cluster, as last reported
  std::map<std::string, std::string> apis_;    // the API each cluster was last seen speaking
  bool audit_ok_ = true;
};

}  // namespace gpufed::runtime
