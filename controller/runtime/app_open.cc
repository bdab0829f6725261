// Opening the App (app.h says in which order): the options checked, the clock and the
// store, the audit trail, the scenario, the loop and the listeners. What runs once it is
// open (Step, Run, Stop) is app.cc.
#include <filesystem>
#include <optional>

#include "controller/audit/records.h"
#include "controller/common/secure_file.h"
#include "controller/pg/connection_policy.h"
#include "controller/pgjournal/pg_journal_storage.h"
#include "controller/pgjournal/pg_record_source.h"
#include "controller/pgjournal/pg_snapshot_store.h"
#include "controller/runtime/app.h"
#include "controller/runtime/app_checks.h"
#include "controller/runtime/shared_store.h"

namespace gpufed::runtime {

std::string DefaultScenarioFile(const std::string& config_dir) {
  std::string guess = config_dir + "/simulation/scenario.yaml";
  return std::filesystem::exists(guess) ? guess : "";
}

Result<std::unique_ptr<App>> App::Open(AppOptions options, const connectors::ConnectorRegistry& registry,
                                       AppView* view) {
  GPUFED_RETURN_IF_ERROR(CheckListeners(options));
  std::unique_ptr<App> app(new App(std::move(options), registry));
  app->view_ = view;
  // 1. The revision: the one load of the repository at start.
  if (Status loaded = app->activator_.Reload({app->options_.config_dir}); !loaded.ok()) {
    std::string why;
    for (const std::string& p : app->activator_.last_rejection()) why += "\n  " + p;
    return FailedPrecondition("policy repository " + app->options_.config_dir + " was not activated:" + why);
  }
  // 2-3. The clock, the state folder and the store.
  GPUFED_RETURN_IF_ERROR(app->OpenClockAndStore(Mode::kRun));
  // 4. The scenario: a bad one stops the start before anything is journalled.
  GPUFED_RETURN_IF_ERROR(app->OpenScenario());
  // 5-6. The audit trail and the loop.
  GPUFED_RETURN_IF_ERROR(app->OpenAuditTrail());
  GPUFED_RETURN_IF_ERROR(app->OpenLoop(Mode::kRun));
  // 7-9. Shipping, listeners, watcher.
  if (Status s = app->OpenListeners(); !s.ok()) {
    (void)app->Stop("start-up failed: " + s.message());
    return s;
  }
  app->watcher_ = std::make_unique<reconcile::RepoWatcher>(app->options_.config_dir);
  app->reported_revision_ = app->activator_.active()->config.revision;
  return app;
}

Result<std::unique_ptr<App>> App::OpenReadOnly(AppOptions options, const connectors::ConnectorRegistry& registry,
                                               std::unique_ptr<policy::Revision> revision) {
  if (revision == nullptr) return InvalidArgument("read-only App: no revision");
  std::unique_ptr<App> app(new App(std::move(options), registry));
  app->activator_.Adopt(std::move(revision));
  GPUFED_RETURN_IF_ERROR(app->OpenClockAndStore(Mode::kReadOnly));
  GPUFED_RETURN_IF_ERROR(app->OpenScenario());
  GPUFED_RETURN_IF_ERROR(app->OpenLoop(Mode::kReadOnly));
  app->stopped_ = true;  // nothing to close
  return app;
}

Status App::OpenClockAndStore(Mode mode) {
  const AppOptions& o = options_;
  const std::string db = o.state_dir + "/gpufed.db";
  // Replicas sharing a store take turns by the lease, on the wall clock: a term cannot
  // jump a virtual clock that another replica continues.
  virtual_time_ = !o.shared && registry_.AllRunOnVirtualTime(activator_.active()->config.clusters);
  if (o.durability == Durability::kUnsynced && !virtual_time_) {
    return FailedPrecondition("unsynced storage (--unsafe-no-fsync) is only for federations of simulated clusters; " +
                              o.config_dir + " declares a cluster whose connector is not sim");
  }
  clock_ = o.clock != nullptr ? o.clock
           : virtual_time_    ? static_cast<const gpufed::Clock*>(&virtual_clock_)
                              : &wall_clock_;
  if (mode == Mode::kReadOnly) {
    // The folder may be a live controller's, or a copy an operator wants left as it is.
    std::error_code ec;
    if (!std::filesystem::exists(db, ec)) return NotFound("no controller state in " + o.state_dir + " (no gpufed.db)");
    Result<std::unique_ptr<store::Store>> store = store::Store::OpenReadOnly(db);
    if (!store.ok()) return Status(store.status().code(), db + ": " + store.status().message());
    store_ = std::move(store).value();
  } else {
    // The state folder holds every spec's run.env, the signing key, the ledgers and the
    // admin token: created 0700, or narrowed to 0700 (and said so) when an older gpufed
    // left it open.
    for (const std::string& dir : {o.state_dir, o.state_dir + "/connectors"}) {
      Result<std::optional<ModeChange>> made = MakePrivateFolder(dir);
      if (!made.ok()) return Status(made.status().code(), "state folder: " + made.status().message());
      if (made->has_value()) log().Warn("run", (*made)->ToString());
    }
    Result<std::unique_ptr<store::Store>> store =
        o.shared ? OpenSharedStore(*o.shared) : store::Store::Open(db, o.durability);
    if (!store.ok()) return store.status();
    store_ = std::move(store).value();
  }
  // A virtual-time run continues from the clock it had reached.
  if (clock_ == &virtual_clock_) {
    Result<std::optional<Duration>> saved = store_->GetMetaMillis("clock_ms");
    if (!saved.ok()) return Status(saved.status().code(), "state folder: gpufed.db: " + saved.status().message());
    if (*saved) virtual_clock_.AdvanceTo(**saved);
  }
  // This process's span begins here, before it writes a row (the run summary's start).
  Result<store::StoreMark> mark = store_->Mark();
  if (!mark.ok()) return Status(mark.status().code(), "state folder: gpufed.db: " + mark.status().message());
  process_start_ = {clock_->Now(), *mark};
  return Status::Ok();
}

Status App::OpenAuditTrail() {
  audit::AuditTrailOptions ao;
  ao.dir = options_.state_dir + "/audit";
  ao.env = options_.audit_env;
  ao.key_file = options_.audit_key;
  ao.segment_bytes = options_.audit_segment_bytes;
  ao.archive_dir = options_.audit_archive;
  ao.durability = options_.durability;
  if (options_.shared) {
    // The journal and the passes' snapshots are the database's tables, written in the
    // term's fenced transactions (a deposed leader writes neither), so any replica replays
    // any term's decisions; the folder keeps this replica's derived files (tiles, the
    // sinks' cursors).
    Result<pg::ConnectionPolicy> policy = pg::ConnectionPolicy::Parse(options_.shared->uri);
    if (!policy.ok()) return Status(policy.status().code(), "--store: " + policy.status().message());
    ao.open_storage = [policy = *policy,
                       fence = options_.shared->fence]() -> Result<std::unique_ptr<audit::JournalStorage>> {
      Result<std::unique_ptr<pg::Connection>> connection = pg::Connection::Open(policy);
      if (!connection.ok()) return connection.status();
      pgjournal::PgJournalStorageOptions so;
      so.fence = fence;
      return std::unique_ptr<audit::JournalStorage>(
          std::make_unique<pgjournal::PgJournalStorage>(std::move(connection).value(), so));
    };
    ao.open_source = [policy = *policy]() -> std::unique_ptr<audit::JournalRecordSource> {
      return std::make_unique<pgjournal::PgJournalRecordSource>(policy);
    };
    ao.open_snapshots = [policy = *policy,
                         fence = options_.shared->fence]() -> Result<std::unique_ptr<audit::SnapshotStore>> {
      Result<std::unique_ptr<pg::Connection>> connection = pg::Connection::Open(policy);
      if (!connection.ok()) return connection.status();
      Result<std::unique_ptr<pgjournal::PgSnapshotStore>> store =
          pgjournal::PgSnapshotStore::Open(std::move(connection).value(), {.fence = fence});
      if (!store.ok()) return store.status();
      return std::unique_ptr<audit::SnapshotStore>(std::move(store).value());
    };
  }
  Result<std::unique_ptr<audit::AuditTrail>> trail = audit::AuditTrail::Open(ao);
  if (!trail.ok()) return trail.status();
  audit_ = std::move(trail).value();
  // Failures here make the journal unhealthy: the loop reports it and does not place.
  audit::AuditJournal& journal = audit_->journal();
  (void)journal.Append(audit::ControllerStartRecord(options_.build, options_.state_dir, options_.durability));
  const policy::Revision& active = *activator_.active();
  (void)journal.Append(audit::PolicyActivatedRecord(active.config.revision, options_.config_dir, active.tests.passed));
  return Status::Ok();
}

Status App::OpenScenario() {
  if (options_.scenario.empty()) options_.scenario = DefaultScenarioFile(options_.config_dir);
  if (options_.scenario.empty()) return Status::Ok();
  Result<ScenarioSource> scenario = ScenarioSource::Load(options_.scenario, activator_.active()->config);
  if (!scenario.ok()) return scenario.status();
  scenario_ = std::move(scenario).value();
  // The scenario's failures are the sim connectors' input: bound into the App's copy of
  // the providers, which the loop makes its connectors with.
  return scenario_.BindFailures(registry_);
}

Status App::OpenLoop(Mode mode) {
  reconcile::ControllerOptions co;
  co.config_dir = options_.config_dir;
  co.state_dir = options_.state_dir;
  co.reconcile = options_.reconcile;
  if (options_.shared) co.reconcile.leader_epoch = options_.shared->epoch;
  co.build = options_.build;
  reconcile::LoopParts parts;
  parts.store = store_.get();
  parts.activator = &activator_;
  parts.audit = mode == Mode::kRun ? audit_.get() : nullptr;
  parts.registry = &registry_;
  parts.clock = clock_;
  parts.log = &log();
  // On the shared database a submission group's rows commit in its records' transaction.
  if (options_.shared) parts.store_writes_in_journal = StoreWritesInJournalTransaction();
  Result<std::unique_ptr<reconcile::Controller>> opened = reconcile::Controller::Open(co, parts);
  if (!opened.ok()) return opened.status();
  controller_ = std::move(opened).value();
  if (mode == Mode::kRun) controller_->AddSourceSpecs(kScenarioSource, scenario_.specs());
  if (options_.shared && options_.shared->metrics) controller_->AttachMetrics(options_.shared->metrics);
  if (options_.shared && mode == Mode::kRun) {
    // The leader's read views for the standbys (view_publisher.h), paced on the wall clock.
    Result<pg::ConnectionPolicy> policy = pg::ConnectionPolicy::Parse(options_.shared->uri);
    if (!policy.ok()) return Status(policy.status().code(), "--store: " + policy.status().message());
    Result<std::unique_ptr<ViewPublisher>> publisher = ViewPublisher::Open(
        *policy, wall_clock_,
        {.term = options_.shared->epoch, .replica = options_.shared->replica, .fence = options_.shared->fence});
    if (!publisher.ok()) return publisher.status();
    publisher_ = std::move(publisher).value();
  }
  return Status::Ok();
}

Status App::OpenListeners() {
  const AppOptions& o = options_;
  shipping_env_ = audit::NewPosixEnv();
  shipping_ = std::make_unique<SinkShipping>(*controller_, shipping_env_.get(), o.state_dir + "/audit",
                                             audit_ != nullptr ? audit_->source_factory() : nullptr);
  if (Status s = shipping_->Follow(controller_->AuditSinks()); !s.ok()) {
    return Status(s.code(), "audit shipping: " + s.message());
  }
  if (audit_ != nullptr) {
    witnessing_ = std::make_unique<WitnessFollowing>(*controller_, *audit_, shipping_env_.get(),
                                                     [this](const std::string& line) { log().Warn("audit", line); });
    // A witness the repository names but gpufed cannot use (a bad key or URL) stops the
    // start; tiles that cannot be read only delay witnessing (they are rebuilt at a start).
    if (Status s = witnessing_->Follow(controller_->AuditWitnesses()); !s.ok()) {
      if (s.code() != StatusCode::kFailedPrecondition) return Status(s.code(), "audit witnessing: " + s.message());
      log().Warn("audit", "audit witnessing: " + s.message());
    }
  }
  const std::vector<std::string> warnings = StartWarnings(o);
  for (const std::string& w : warnings) log().Warn("run", w);
  if (!o.listen.empty()) {
    // The files as the server is about to read them: a change from here on is a reload.
    if (!o.tls_cert.empty()) tls_files_stamp_ = TlsFilesStamp(o);
    Result<server::ServerOptions> so =
        server::MakeServerOptions(o.listen, o.tokens_file, o.tls_cert, o.tls_key, o.state_dir);
    if (!so.ok()) return so.status();
    so->tls_client_ca = o.tls_client_ca;
    so->max_body_bytes = o.max_body_bytes;
    so->warnings = warnings;
    so->audit_log = audit_ != nullptr ? &audit_->log() : nullptr;
    if (o.shared) so->replica_status = o.shared->status;
    Result<std::unique_ptr<server::ApiServer>> started = server::ApiServer::Start(controller_.get(), *so);
    if (!started.ok()) return started.status();
    api_ = std::move(started).value();
    // Whether callers are named by certificates is said once, at the start (never a secret:
    // the CA file's path only).
    log().Info("run", std::string("API on ") + (so->tls_cert.empty() ? "http" : "https") + "://" + so->host + ":" +
                          std::to_string(api_->port()) +
                          (o.tls_client_ca.empty() ? ""
                                                   : ", mutual TLS: clients present a certificate issued by " +
                                                         o.tls_client_ca + " and are named by its subject"));
  }
  if (!o.metrics_listen.empty()) {
    Result<std::unique_ptr<server::MetricsServer>> metrics =
        server::MetricsServer::Start(controller_.get(), o.metrics_listen);
    if (!metrics.ok()) return metrics.status();
    metrics_ = std::move(metrics).value();
    log().Info("run", "metrics (no token) on port " + std::to_string(metrics_->port()) + " of " + o.metrics_listen);
  }
  return Status::Ok();
}

}  // namespace gpufed::runtime
