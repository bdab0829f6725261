// The App once open (app_open.cc opens it): stepping the loop, reporting, stopping and
// `gpufed run`'s main loop.
#include "controller/runtime/app.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>
#include <optional>
#include <thread>

#include "controller/audit/records.h"
#include "controller/config/repository.h"
#include "controller/ha/fence.h"
#include "controller/runtime/app_checks.h"
#include "controller/runtime/run_signals.h"
#include "controller/runtime/virtual_pacer.h"

namespace gpufed::runtime {

namespace {

constexpr auto kTlsFileCheckEvery = std::chrono::seconds(5);

}  // namespace

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
