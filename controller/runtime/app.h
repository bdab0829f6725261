#pragma once
// The controller process: `gpufed run` is an App, `gpufed plan --state` is the same App
// opened read-only, and tests step the same object on a clock they own. The App owns
// every resource of the process and is the one place that opens and closes them.
//
// Start (App::Open), in this order; each step may use those before it:
//   1. the active revision: the repository, validated, compiled and tested, loaded once
//      (its Clusters decide the clock, its config checks the scenario);
//   2. the clock: virtual for a federation of simulated clusters, else the wall clock;
//   3. the state folder (0700) and the store, migrated (read-only: opened as it is); a
//      virtual-time run continues from the clock the store saved;
//   4. the scenario: a workload source and the sim connectors' input;
//   5. the audit trail: signing key and journal (`controller-start`, `policy-activated`);
//   6. the loop (reconcile::Controller) and its connector set, one connector per Cluster;
//   7. the shipping to every AuditSink of the revision;
//   8. the API and the metrics listeners;
//   9. the repository watcher (then, in Run, the stop signals).
// Read-only (App::OpenReadOnly) takes steps 1-4 and 6: no journal, no listener, no
// migration, no ledger repair, read-only connectors; nothing in the state folder changes.
// Stop (App::Stop) goes back: the listeners first (no request reaches a stopping loop),
// the loop (its last fair-share save), the journal (`controller-stop` and a final
// signed checkpoint), then the drain of the sinks; the destructor releases the rest in
// reverse order of start, the store last.
#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "connectors/core/registry.h"
#include "controller/audit/audit_trail.h"
#include "controller/common/build_info.h"
#include "controller/common/clock.h"
#include "controller/common/log.h"
#include "controller/pg/transaction.h"
#include "controller/reconcile/controller.h"
#include "controller/reconcile/watcher.h"
#include "controller/runtime/run_signals.h"
#include "controller/runtime/scenario_source.h"
#include "controller/runtime/sink_shipping.h"
#include "controller/runtime/view_publisher.h"
#include "controller/runtime/witness_following.h"
#include "controller/server/metrics_server.h"
#include "controller/server/server.h"
#include "controller/store/store.h"
#include "policies/engine/activation.h"

namespace gpufed::runtime {

// A store and journal shared by several replicas in one PostgreSQL database (issue 38):
// the App runs as the leader of one term (runtime/replica.h opens it when its replica
// takes the lease, and lets it go when the term ends).
struct SharedStore {
  // A libpq URI (postgres://...); the pg layer's rules apply (pg/connection_policy.h).
  std::string uri;
  // The term's lease epoch: every action the loop applies carries it.
  int64_t epoch = 0;
  // Runs first in every write transaction, to the store and the journal: the term's fence.
  std::function<Status(pg::Transaction&)> fence;
  // Checked before every pass: non-OK ends the run at once ("lost the lead: ..."), with
  // no closing record (the next leader's term follows in the same journal) and no wait for
  // sinks or witnesses.
  std::function<Status()> still_leading;
  // This replica and who leads: /readyz, /v1/status, and Prometheus text for /metrics.
  std::function<nlohmann::json()> status;
  std::function<std::string()> metrics;
  // This replica's name: on the read views it publishes for the standbys.
  std::string replica;
};

struct AppOptions {
  std::string config_dir;
  std::string state_dir = "gpufed-state";
  std::string scenario;          // sim scenario file; empty: DefaultScenarioFile(config_dir) if it exists
  std::string listen;            // ADDR:PORT for the API; empty: no API
  std::string tokens_file, tls_cert, tls_key;
  // PEM CA certificates (--tls-client-ca, needs tls_cert): mutual TLS, every API client
  // presents a certificate chaining to one of them and is named by its subject.
  std::string tls_client_ca;
  // The audit log's private key (--audit-key); empty: made in <state>/audit on the first
  // start, which /readyz warns about for a real (synced) run.
  std::string audit_key;
  // The journal's segment size (--audit-segment-size): it rotates to a new segment file
  // once one reaches it; `gpufed audit archive` moves whole rotated segments.
  uint64_t audit_segment_bytes = uint64_t{64} << 20;
  // An archive folder of the journal (--audit-archive; empty: none), read only: the
  // journal's tiles are rebuilt from it when they must be (controller/audit/archive_env.h).
  std::string audit_archive;
  size_t max_body_bytes = size_t{1} << 20;  // API request bodies over this get 413
  std::string metrics_listen;     // ADDR:PORT (loopback or private) for /metrics without a token; empty: none
  // Plain HTTP on an address that is not loopback (--allow-plaintext): refused without it,
  // warned about in the log and /readyz with it.
  bool allow_plaintext = false;
  bool until_idle = false;
  double speed = 0;              // virtual seconds per wall second; 0: as fast as possible
  // Run stops after this much controller time. Unset: 30 days of a simulated federation's
  // virtual time, and no limit on the wall clock (a service must not end after a month).
  std::optional<Duration> max_time;
  Duration resync = Duration::FromSeconds(300);
  Duration drain_timeout = Duration::FromSeconds(60);
  // --checkpoint-interval, accepted for older command lines and configuration files: every
  // journal commit is signed now (sign-ahead), so nothing reads it.
  Duration checkpoint_interval = Duration::FromSeconds(30);
  BuildInfo build;               // what the binary is: the controller-start record, /metrics
  reconcile::ReconcilerOptions reconcile;  // the loop's tuning (fair-share half-life, ...)
  bool handle_signals = true;    // SIGTERM/SIGINT stop the run gracefully
  // kUnsynced (`--unsafe-no-fsync`, the Philly replay's default): nothing waits for the
  // disk. Refused unless every cluster is simulated (common/durability.h).
  Durability durability = Durability::kSynced;
  // Where the run's log lines go (`--log-level`, `--log-format`); must outlive the App.
  // Null: standard error, text, info and above.
  const Logger* log = nullptr;
  // Tests: a clock they advance (and Step instead of Run). Null: the App's own.
  const gpufed::Clock* clock = nullptr;
  // Tests: the file system the audit trail writes through (a FaultEnv). Null: the real one.
  audit::Env* audit_env = nullptr;
  // Set: the store is PostgreSQL's, shared with other replicas, and this App leads one term.
  std::optional<SharedStore> shared;
  // The stop signals of a caller that outlives the App (a replica's, across its terms);
  // null: the App installs its own when handle_signals.
  RunSignals* signals = nullptr;
};

// Where the run is shown (the CLI's live view); every call comes from the loop's thread.
class AppView {
 public:
  virtual ~AppView() = default;
  virtual void Event(Duration now, const std::string& line) = 0;
  virtual void Update(reconcile::Controller& controller, Duration now, bool force) = 0;
};

// `<config>/simulation/scenario.yaml`, which `gpufed run` and `gpufed plan --state` play
// when no --scenario is given.
std::string DefaultScenarioFile(const std::string& config_dir);

class App {
 public:
  // Starts everything (see the order above); errors name what could not start, and what
  // had started is released. `view` (may be null) must outlive the App; the App keeps
  // its own copy of `registry` (main's providers), with the sim one bound to the scenario.
  static Result<std::unique_ptr<App>> Open(AppOptions options, const connectors::ConnectorRegistry& registry,
                                           AppView* view);
  // The App of `gpufed plan --state`: `revision` (prepared by the caller, who may have
  // let failing PolicyTests through) over the controller state in options.state_dir,
  // read-only. NotFound when the folder holds no controller store.
  static Result<std::unique_ptr<App>> OpenReadOnly(AppOptions options, const connectors::ConnectorRegistry& registry,
                                                   std::unique_ptr<policy::Revision> revision);
  // Releases everything in reverse order of start; writes nothing to the journal (Run
  // or Stop does).
  ~App();
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // One iteration: reload a changed repository, submit the scenario's due workloads,
  // run one pass, report what changed.
  Result<reconcile::PassStats> Step();
  // Nothing waiting or running and nothing left to submit.
  bool Idle();
  // Nothing running and nothing to come: what waits can never be placed by time alone.
  bool Stuck();
  Duration NextEvent();
  // Steps until idle (--until-idle), a stop signal or --max-time, advancing virtual time
  // or sleeping on the wall clock; then Stop. Returns the process's exit code, or
  // kLostLeadExit when a shared store's term ended (SharedStore::still_leading).
  int Run();
  static constexpr int kLostLeadExit = 75;
  // The stop sequence (see above). Non-OK names the sinks still behind, or why the
  // journal could not be closed. Idempotent.
  Status Stop(const std::string& reason);
  // Reads the API's TLS certificate and key again (SIGHUP; Step does it when either file
  // changed) and says so in the log; on an error the certificate in use stays. OK with
  // nothing to do when the API serves no TLS.
  Status ReloadTls(const std::string& why);

  reconcile::Controller& controller() { return *controller_; }
  store::Store& store() { return *store_; }
  const policy::Revision& revision() const { return *activator_.active(); }
  const gpufed::Clock& clock() const { return *clock_; }
  bool virtual_time() const { return virtual_time_; }
  const std::string& scenario_file() const { return scenario_.file(); }
  // Where this process began: the controller time and the store's mark when the store
  // opened. What was written after it is this process's (the run summary's span).
  struct ProcessStart {
    Duration at;
    store::StoreMark mark;
  };
  const ProcessStart& process_start() const { return process_start_; }

 private:
  App(AppOptions options, const connectors::ConnectorRegistry& registry)
      : options_(std::move(options)), registry_(registry), activator_(&registry_) {}
  enum class Mode { kRun, kReadOnly };
  // The steps of the start (see above).
  Status OpenClockAndStore(Mode mode);
  Status OpenAuditTrail();
  Status OpenScenario();
  Status OpenLoop(Mode mode);
  Status OpenListeners();
  void Report(Duration now);
  // Shows `line` in the view and logs it at `level`.
  void Event(Duration now, const std::string& line, LogLevel level = LogLevel::kInfo);
  const Logger& log() const { return options_.log != nullptr ? *options_.log : default_log_; }

  // Members in the order of start: destroyed in reverse.
  AppOptions options_;
  AppView* view_ = nullptr;
  // The providers: they check each revision's connector blocks and make the loop's
  // connectors (the sim one bound to the scenario's failures in OpenScenario).
  connectors::ConnectorRegistry registry_;
  policy::PolicyActivator activator_;
  bool virtual_time_ = false;
  gpufed::ManualClock virtual_clock_;
  gpufed::SystemClock wall_clock_;
  const gpufed::Clock* clock_ = nullptr;
  std::unique_ptr<store::Store> store_;
  ProcessStart process_start_;
  std::unique_ptr<audit::AuditTrail> audit_;
  ScenarioSource scenario_;
  std::unique_ptr<reconcile::Controller> controller_;
  std::unique_ptr<ViewPublisher> publisher_;  // a shared store's leader: its read views for the standbys
  std::unique_ptr<audit::Env> shipping_env_;
  std::unique_ptr<SinkShipping> shipping_;
  std::unique_ptr<WitnessFollowing> witnessing_;  // after shipping_: reset before it, and before audit_
  std::unique_ptr<server::ApiServer> api_;
  std::unique_ptr<server::MetricsServer> metrics_;
  std::unique_ptr<reconcile::RepoWatcher> watcher_;
  bool stopped_ = false;
  bool lost_lead_ = false;  // the term ended: Stop writes nothing and waits for no one
  std::string reported_revision_;              // the revision the view last heard of
  Logger default_log_{&std::cerr, LogLevel::kInfo, LogFormat::kText};
  std::map<std::string, bool> healthy_;        // per cluster, as last reported
  std::map<std::string, std::string> apis_;    // the API each cluster was last seen speaking
  bool audit_ok_ = true;
  // The TLS files as last seen (Step reloads when they change), looked at every few seconds.
  std::string tls_files_stamp_;
  std::chrono::steady_clock::time_point tls_checked_at_{};
};

}  // namespace gpufed::runtime
