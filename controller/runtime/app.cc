#include "controller/runtime/app.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <thread>

#include "controller/audit/records.h"
#include "controller/common/secure_file.h"
#include "controller/config/repository.h"
#include "controller/ha/fence.h"
#include "controller/pg/connection_policy.h"
#include "controller/pgjournal/pg_journal_storage.h"
#include "controller/pgjournal/pg_record_source.h"
#include "controller/pgjournal/pg_snapshot_store.h"
#include "controller/runtime/app_checks.h"
#include "controller/runtime/run_signals.h"
#include "controller/runtime/shared_store.h"
#include "controller/runtime/virtual_pacer.h"

namespace gpufed::runtime {

std::string DefaultScenarioFile(const std::string& config_dir) {
  std::string guess = config_dir + "/simulation/scenario.yaml";
  return std::filesystem::exists(guess) ? guess : "";
}

namespace {

constexpr auto kTlsFileCheckEvery = std::chrono::seconds(5);

}  // namespace

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

App::~App() {
  // The reverse of the start; the members' order says the same, this makes it explicit.
  watcher_.reset();
  if (api_) api_->Stop();  // no request reaches a loop being torn down
  if (metrics_) metrics_->Stop();
  witnessing_.reset();     // detaches from the loop before it goes
  shipping_.reset();
  controller_.reset();     // releases the connectors
  audit_.reset();
  store_.reset();
}

void App::Event(Duration now, const std::string& line, LogLevel level) {
  if (view_ != nullptr) view_->Event(now, line);
  log().Log(level, "run", line);
}

Status App::ReloadTls(const std::string& why) {
  if (api_ == nullptr || options_.tls_cert.empty()) return Status::Ok();
  tls_files_stamp_ = TlsFilesStamp(options_);
  Status reloaded = api_->ReloadTls();
  if (reloaded.ok()) {
    Event(clock_->Now(), "TLS certificate reloaded from " + options_.tls_cert +
                             (options_.tls_client_ca.empty() ? "" : ", client CA from " + options_.tls_client_ca) +
                             " (" + why + ")");
  } else {
    Event(clock_->Now(), "TLS reload (" + why + ") failed, the certificate in use stays: " + reloaded.message(),
          LogLevel::kWarn);
  }
  return reloaded;
}

Result<reconcile::PassStats> App::Step() {
  reconcile::Controller& c = *controller_;
  // A certificate renewed in place (cert-manager, certbot) is served without a signal.
  if (api_ != nullptr && !options_.tls_cert.empty() &&
      std::chrono::steady_clock::now() - tls_checked_at_ >= kTlsFileCheckEvery) {
    tls_checked_at_ = std::chrono::steady_clock::now();
    if (TlsFilesStamp(options_) != tls_files_stamp_) (void)ReloadTls("the files changed");
  }
  if (watcher_->Changed()) {
    Status s = c.Reload();
    // A reload that finds the revision it has (a commit of what was already read) says nothing.
    const std::string revision = c.active_revision();
    if (!s.ok()) {
      Event(clock_->Now(), s.message(), LogLevel::kWarn);
    } else if (revision != reported_revision_) {
      Event(clock_->Now(), "policy revision " + config::ShortRevision(revision) + " activated");
    }
    reported_revision_ = revision;
    if (s.ok()) {
      // Sinks the new revision adds, changes or removes: restart from the cursors.
      if (Status shipped = shipping_->Follow(c.AuditSinks()); !shipped.ok()) {
        Event(clock_->Now(), "audit shipping: " + shipped.ToString(), LogLevel::kWarn);
      }
      if (witnessing_ != nullptr) {
        if (Status witnessed = witnessing_->Follow(c.AuditWitnesses()); !witnessed.ok()) {
          Event(clock_->Now(), "audit witnessing: " + witnessed.ToString(), LogLevel::kWarn);
        }
      }
    }
  }
  for (const model::Workload& w : scenario_.TakeDue(clock_->Now())) {
    GPUFED_RETURN_IF_ERROR(c.SubmitFromSource(w, kScenarioSource));
  }
  Result<reconcile::PassStats> stats = c.Pass();
  const Duration now = clock_->Now();
  if (!stats.ok()) {
    Event(now, "pass failed: " + stats.status().ToString(), LogLevel::kError);
  } else {
    if (stats->requeued > 0) Event(now, std::to_string(stats->requeued) + " workload(s) requeued", LogLevel::kDebug);
    if (stats->preempted > 0) Event(now, std::to_string(stats->preempted) + " workload(s) preempted", LogLevel::kDebug);
  }
  Report(now);
  if (publisher_ != nullptr) {
    // A failure costs the standbys a fresher view, not the pass; a fenced one ends the
    // term at the next still_leading check.
    if (Status published = publisher_->MaybePublish(c); !published.ok()) {
      Event(now, "publishing the read views for the standbys: " + published.ToString(), LogLevel::kWarn);
    }
  }
  // Commits with the next store write (a restart after a crash resumes a little earlier).
  if (virtual_time_) c.store()->SetMetaLater("clock_ms", std::to_string(now.millis()));
  return stats;
}

void App::Report(Duration now) {
  reconcile::Controller& c = *controller_;
  for (const std::string& notice : c.TakeNotices()) {
    Event(now, notice, LogLevel::kWarn);
  }
  Status audit = c.audit_health();
  if (audit.ok() != audit_ok_) {
    audit_ok_ = audit.ok();
    std::string line = audit_ok_
                           ? "audit journal writable again, placing resumed"
                           : "audit journal cannot be written, placement stopped (not ready): " + audit.ToString();
    Event(now, line, audit_ok_ ? LogLevel::kInfo : LogLevel::kError);
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
    }
    bool h = cluster.value("healthy", false) || !cluster.value("observed", false);
    if (healthy_.count(name) && healthy_[name] != h) {
      Event(now, "cluster " + name + (h ? " is healthy again" : " is unhealthy: " + cluster.value("last_error", "")),
            h ? LogLevel::kInfo : LogLevel::kWarn);
    }
    healthy_[name] = h;
  }
  if (view_ != nullptr) view_->Update(c, now, false);
}

bool App::Idle() { return scenario_.done() && controller_->Idle(); }

bool App::Stuck() { return scenario_.done() && controller_->Stuck(); }

Duration App::NextEvent() {
  Duration next = controller_->NextEvent();
  Duration submission = scenario_.NextSubmission();
  if (!scenario_.done() && (next.millis() == 0 || submission < next)) next = submission;
  return next;
}

Status App::Stop(const std::string& reason) {
  if (stopped_) return Status::Ok();
  stopped_ = true;
  if (api_) api_->Stop();  // no request reaches a stopping loop
  if (metrics_) metrics_->Stop();
  controller_->Stop();     // waits for a pass; the last fair-share save
  if (lost_lead_) {
    // Another replica leads (or may at any moment): this one writes nothing more, and its
    // journal's records continue in the next leader's term. Sinks and witnesses are the
    // next leader's to bring up to date.
    if (view_ != nullptr) view_->Update(*controller_, clock_->Now(), true);
    return Status::Ok();
  }
  // controller-stop and the final signed checkpoint.
  audit::AuditJournal& journal = audit_->journal();
  Result<uint64_t> seq = journal.Append(audit::ControllerStopRecord(reason));
  Status closed = journal.Close();
  Status stopped = seq.ok() ? closed : seq.status();
  // Every record, the closing ones included, reaches every sink before the exit.
  if (audit::LiveShipping* live = shipping_ != nullptr ? shipping_->live() : nullptr) {
    const uint64_t head = controller_->audit_head();
    std::vector<std::string> behind = live->WaitAcknowledged(head, options_.drain_timeout.millis() * 1000, nullptr);
    if (behind.empty()) {
      log().Info("run", "audit sinks hold every record (seq " + std::to_string(head) + ")");
    } else {
      std::string names;
      for (const std::string& n : behind) names += (names.empty() ? "" : ", ") + n;
      std::string line = "audit sinks still behind after --drain-timeout " + options_.drain_timeout.ToString() + ": " +
                         names + " (they resume from their cursors at the next start)";
      log().Warn("run", line);
      if (stopped.ok()) stopped = Status(StatusCode::kDeadlineExceeded, line);
    }
  }
  // The closing checkpoint reaches every witness too, so the whole journal is witnessed.
  if (audit::LiveWitnessing* live = witnessing_ != nullptr ? witnessing_->live() : nullptr) {
    const uint64_t signed_size =
        journal.last_checkpoint().seq - 1;  // the closing checkpoint signs the records before it
    std::vector<std::string> behind = live->WaitCosigned(signed_size, options_.drain_timeout.millis() * 1000);
    if (behind.empty()) {
      log().Info("run",
                 "audit witnesses cosigned the closing checkpoint (tree size " + std::to_string(signed_size) + ")");
    } else {
      std::string names;
      for (const std::string& n : behind) names += (names.empty() ? "" : ", ") + n;
      log().Warn("run", "audit witnesses without the closing checkpoint: " + names +
                            " (the next start sends them the newest checkpoint)");
    }
  }
  if (view_ != nullptr) view_->Update(*controller_, clock_->Now(), true);
  return stopped;
}

int App::Run() {
  std::unique_ptr<RunSignals> own_signals =
      options_.signals == nullptr && options_.handle_signals ? std::make_unique<RunSignals>() : nullptr;
  RunSignals* signals = options_.signals != nullptr ? options_.signals : own_signals.get();
  const Duration start = clock_->Now();
  int exit_code = 0;
  std::string stop_reason = "shutdown";
  auto signalled = [&] { return signals != nullptr && signals->requested() != 0; };
  uint64_t hangups = signals != nullptr ? signals->hangups() : 0;
  // --max-time; unset: 30 days of virtual time, no limit on the wall clock.
  const int64_t max_millis = options_.max_time ? options_.max_time->millis()
                             : virtual_time_   ? int64_t{30} * 24 * 3600 * 1000
                                               : std::numeric_limits<int64_t>::max();
  std::optional<VirtualPacer> pacer;
  if (options_.speed > 0) pacer.emplace(options_.speed, start);
  // A shared store's term ended: the run stops here, and the replica stands by.
  auto lose_lead = [&](const std::string& why) {
    lost_lead_ = true;
    stop_reason = "lost the lead: " + why;
    Event(clock_->Now(), stop_reason + "; this replica stops acting and becomes a standby", LogLevel::kWarn);
    exit_code = kLostLeadExit;
  };
  while (true) {
    if (options_.shared && options_.shared->still_leading) {
      if (Status leading = options_.shared->still_leading(); !leading.ok()) {
        lose_lead(leading.message());
        break;
      }
    }
    Result<reconcile::PassStats> stats = Step();
    const Duration now = clock_->Now();
    // A write of this pass was fenced: another replica took the lease while it ran (the
    // elector may notice only at its next renewal). The term is over, not the process.
    if (!stats.ok() && options_.shared && ha::IsFenced(stats.status())) {
      lose_lead(stats.status().message());
      break;
    }
    // A journal in the database fails for good at its first failed commit (whose outcome
    // may be unknown). A new term reopens it from what the database holds, so this one
    // ends, rather than leading on without a journal and placing nothing.
    if (options_.shared) {
      if (Status journal = audit_->journal().health(); !journal.ok()) {
        lose_lead("the audit journal failed (" + journal.ToString() + "); a new term reopens it");
        break;
      }
    }
    if (!stats.ok() && stats.status().code() != StatusCode::kUnavailable) {
      exit_code = 1;
      break;
    }
    if (signals != nullptr && signals->hangups() != hangups) {
      hangups = signals->hangups();
      (void)ReloadTls("SIGHUP");
    }
    if (signalled()) {
      stop_reason = RunSignals::Name(signals->requested());
      Event(now, stop_reason + ": the pass finished; stopping (a second signal exits at once)");
      break;
    }
    if (options_.until_idle && Idle()) break;
    if (options_.until_idle && Stuck()) {
      Event(now, "nothing running and nothing left to happen: the waiting workloads cannot be placed");
      break;
    }
    if (now.millis() - start.millis() > max_millis) {
      Event(now, "--max-time reached");
      break;
    }
    Duration next = NextEvent();
    const Duration limit = now + options_.resync;
    if (next.millis() == 0 || next > limit) next = limit;
    if (virtual_time_ && clock_ == &virtual_clock_) {
      if (pacer) {
        // --speed: at most a quarter of a wall second at a time, so a long gap between
        // events is crossed at the pace and a cancel lands when it was made.
        VirtualPacer::Step step = pacer->Toward(now, next);
        if (step.wait.count() > 0 && !signalled()) {
          std::this_thread::sleep_for(step.wait);
          step = pacer->Toward(now, next);
        }
        virtual_clock_.AdvanceTo(step.advance_to);
      } else {
        virtual_clock_.AdvanceTo(next);
      }
    } else {
      // Sleep in short steps so a stop signal is acted on within ~100 ms.
      int64_t ms = std::clamp<int64_t>(next.millis() - now.millis(), 10, 1000);
      for (int64_t slept = 0; slept < ms && !signalled(); slept += 100) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(100, ms - slept)));
      }
    }
  }
  Status stopped = Stop(stop_reason);
  if (lost_lead_) return exit_code;
  if (!stopped.ok()) {
    // Sinks behind after a signal: the stop itself is clean, they resume at the next start.
    const bool only_sinks_behind = stopped.code() == StatusCode::kDeadlineExceeded;
    if (!only_sinks_behind) log().Error("run", "closing the audit journal: " + stopped.ToString());
    if (!only_sinks_behind || (options_.until_idle && !signalled())) exit_code = 1;
  }
  return exit_code;
}

}  // namespace gpufed::runtime
