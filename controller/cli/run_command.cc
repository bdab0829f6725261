// gpufed run --config DIR [--state DIR] [--listen ADDR:PORT] [--metrics-listen ADDR:PORT]
// [--max-body BYTES] [--until-idle] [--unsafe-no-fsync]: the controller.
//
// With only `sim` clusters the run is in accelerated virtual time: the loop jumps the
// clock to the next event (a job ends, a node arrives, a failure, a submission, a
// backoff, or the resync period), so a day of cluster time takes seconds. With any real
// connector it runs on the wall clock. The process itself is runtime::App; this file
// parses its flags, shows it (RunView) and prints the summary.
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "controller/cli/commands.h"
#include "controller/cli/run_config_file.h"
#include "controller/cli/run_summary.h"
#include "controller/cli/run_view.h"
#include "controller/common/log.h"
#include "controller/common/quantity.h"
#include "controller/config/loader.h"
#include "controller/config/repository.h"
#include "controller/runtime/app.h"
#include "controller/runtime/replica.h"
#include "policies/engine/validation.h"

namespace gpufed::cli {
namespace {

// The runtime's options as the flags fill them; durations as text until parsed.
struct RunOptions {
  runtime::AppOptions rt;
  double speed = -1;           // virtual seconds per wall second; 0 = as fast as possible
  std::string max_time;         // empty: 30d of virtual time, no limit on the wall clock
  std::string resync = "5m";
  std::string drain_timeout = "60s";
  std::string checkpoint_interval = "30s";
  std::string max_body = "1MiB";
  std::string audit_segment_size = "64MiB";
  bool audit_key_from_credential = false;  // --audit-key is $CREDENTIALS_DIRECTORY/audit-signing.key
  std::string log_level = "info";
  std::string log_format = "text";
  bool unsafe_no_fsync = false;
  std::string config_file;     // --config-file: settings for the flags not given
  // Several replicas on one PostgreSQL database (--store postgres://...).
  runtime::ReplicaOptions replica;
  std::string lease_duration = "15s", renew_deadline = "10s", lease_retry = "2s";
};

// Fills the flags the command line left out from --config-file's settings, through the
// flags' own parsing and checks (so `speed: 2e9` fails as --speed 2e9 would).
Status ApplyConfigFile(CLI::App& cmd, const std::string& path) {
  if (path.empty()) return Status::Ok();
  Result<std::vector<RunFileSetting>> settings = ReadRunConfigFile(path);
  if (!settings.ok()) return settings.status();
  for (const RunFileSetting& s : *settings) {
    CLI::Option* flag = cmd.get_option_no_throw("--" + s.flag);
    if (flag == nullptr) return Internal("--config-file: no flag --" + s.flag + " for " + s.where);
    if (flag->count() > 0) continue;  // the command line wins
    try {
      flag->add_result(s.value);
      flag->run_callback();
    } catch (const CLI::Error& e) {
      return InvalidArgument(s.where + ": " + e.what());
    }
  }
  return Status::Ok();
}

// The largest --max-body: every request in flight holds its body (and an accepted one its
// spec) in memory, so a ceiling keeps a typo (64GiB) from letting each tenant's request
// take the host's memory. A workload spec is kilobytes.
constexpr size_t kMaxBodyCeiling = size_t{64} << 20;

// A byte count: "1048576", "1MiB" or "1Mi" (binary), "1MB" or "1M" (decimal).
Result<size_t> ParseByteCount(std::string text) {
  if (text.size() > 1 && text.back() == 'B' && std::isalpha(static_cast<unsigned char>(text[text.size() - 2]))) {
    text.pop_back();
  }
  Result<Quantity> q = Quantity::Parse(text);
  if (!q.ok() || q->milli() <= 0 || q->milli() % 1000 != 0)
    return InvalidArgument("not a positive byte count: " + text);
  return static_cast<size_t>(q->milli() / 1000);
}

// --store postgres://...: this process is one replica of several (runtime/replica.h). A
// term's summary is not printed: what the federation did spans every replica's terms (the
// journal and /v1/decisions have it).
int RunReplica(const RunOptions& o, const runtime::AppOptions& ro, const connectors::ConnectorRegistry& registry,
               RunView& view) {
  runtime::ReplicaOptions replica = o.replica;
  Result<Duration> lease = Duration::Parse(o.lease_duration);
  Result<Duration> renew = Duration::Parse(o.renew_deadline);
  Result<Duration> retry = Duration::Parse(o.lease_retry);
  if (!lease.ok() || !renew.ok() || !retry.ok()) {
    std::cerr << "gpufed run: bad --lease-duration, --renew-deadline or --lease-retry\n";
    return 2;
  }
  replica.lease_duration = *lease;
  replica.renew_deadline = *renew;
  replica.retry_period = *retry;
  if (ro.durability == Durability::kUnsynced) {
    std::cerr << "gpufed run: --unsafe-no-fsync is for one simulated process, not a shared --store\n";
    return 2;
  }
  view.SetWallClock(true);
  Result<std::unique_ptr<runtime::Replica>> opened = runtime::Replica::Open(replica, ro, registry, &view);
  if (!opened.ok()) {
    std::cerr << "gpufed run: " << opened.status().message() << "\n";
    return opened.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::cout << "gpufed run: " << ro.config_dir << ", replica " << (*opened)->name()
            << " on a shared store, wall clock\n";
  return (*opened)->Run();
}

int Run(const RunOptions& o, const connectors::ConnectorRegistry* registry, const BuildInfo& build) {
  // The controller's log: line by line on a pipe or a log file too (stdio buffers 4 KiB
  // blocks off a terminal), so what it says is in the log when it says it. Only here:
  // the one-shot commands' output (query, report) stays block-buffered.
  std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  if (registry == nullptr) {
    std::cerr << "gpufed run: no connectors registered in this binary\n";
    return 1;
  }
  Result<Duration> max_time = Duration::Parse(o.max_time.empty() ? "0s" : o.max_time);
  Result<Duration> resync = Duration::Parse(o.resync);
  Result<Duration> drain_timeout = Duration::Parse(o.drain_timeout);
  Result<Duration> checkpoint_interval = Duration::Parse(o.checkpoint_interval);
  if (!max_time.ok() || !resync.ok() || !drain_timeout.ok() || !checkpoint_interval.ok() ||
      checkpoint_interval->millis() <= 0) {
    std::cerr << "gpufed run: bad --max-time, --resync, --drain-timeout or --checkpoint-interval\n";
    return 2;
  }
  Result<size_t> max_body = ParseByteCount(o.max_body);
  if (!max_body.ok()) {
    std::cerr << "gpufed run: bad --max-body: " << max_body.status().message() << "\n";
    return 2;
  }
  if (*max_body > kMaxBodyCeiling) {
    std::cerr << "gpufed run: --max-body " << o.max_body << " is above 64MiB, the most a request may carry: "
              << "each request in flight holds its body in memory\n";
    return 2;
  }
  Result<size_t> segment_size = ParseByteCount(o.audit_segment_size);
  if (!segment_size.ok() || *segment_size < 4096) {
    std::cerr << "gpufed run: bad --audit-segment-size (4KiB at least): " << o.audit_segment_size << "\n";
    return 2;
  }
  // The log on standard error, each line flushed whole as it is said.
  std::optional<LogLevel> level = ParseLogLevel(o.log_level);
  std::optional<LogFormat> format = ParseLogFormat(o.log_format);
  if (!level || !format) {
    std::cerr << "gpufed run: bad --log-level (debug, info, warn, error) or --log-format (text, json)\n";
    return 2;
  }
  const Logger log(&std::cerr, *level, *format);
  const bool tty = isatty(STDOUT_FILENO) != 0;
  runtime::AppOptions ro = o.rt;
  ro.log = &log;
  ro.speed = o.speed < 0 ? (tty ? 7200 : 0) : o.speed;
  if (!o.max_time.empty()) ro.max_time = *max_time;
  ro.resync = *resync;
  ro.drain_timeout = *drain_timeout;
  ro.checkpoint_interval = *checkpoint_interval;
  ro.max_body_bytes = *max_body;
  ro.audit_segment_bytes = *segment_size;
  ro.build = build;
  if (o.unsafe_no_fsync) ro.durability = Durability::kUnsynced;
  RunView view(std::cout, tty);
  if (!o.replica.store_uri.empty()) return RunReplica(o, ro, *registry, view);
  const auto wall_start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<runtime::App>> opened = runtime::App::Open(ro, *registry, &view);
  if (!opened.ok()) {
    std::cerr << "gpufed run: " << opened.status().message() << "\n";
    const bool serving = !ro.listen.empty() || !ro.metrics_listen.empty();
    return opened.status().code() == StatusCode::kInvalidArgument && serving ? 2 : 1;
  }
  runtime::App& rt = **opened;
  view.SetWallClock(!rt.virtual_time());
  std::cout << "gpufed run: " << ro.config_dir << " revision "
            << config::ShortRevision(rt.controller().active_revision())
            << (rt.virtual_time() ? ", virtual time" : ", wall clock")
            << (rt.scenario_file().empty() ? "" : ", scenario " + rt.scenario_file()) << "\n";
  if (o.audit_key_from_credential) {
    std::cout << "gpufed run: the audit log's key is the service's credential " << kAuditKeyCredential << "\n";
  }
  const int exit_code = rt.Run();
  // The summary covers this process only: from where it found the store to its stop.
  RunSpan span;
  span.start = rt.process_start().at;
  span.mark = rt.process_start().mark;
  span.end = rt.clock().Now();
  span.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  span.wall_clock = !rt.virtual_time();
  Result<ProcessSummary> summary =
      SummarizeProcess(rt.store(), rt.revision().config, span, rt.controller().OfferedGpuSeconds());
  if (summary.ok()) {
    std::cout << RenderSummary(*summary, rt.controller().pass_stats());
  } else {
    std::cout << "summary unavailable: " << summary.status().message() << "\n";
  }
  return exit_code;
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry,
                   const BuildInfo& build) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd =
      app.add_subcommand("run", "Run the controller: reconcile loop, connectors and (with --listen) the API");
  cmd->add_option("-c,--config", o->rt.config_dir, "Policy repository directory (or `repository:` in --config-file)");
  cmd->add_option(
      "--config-file", o->config_file,
      "YAML settings for the flags not given on the command line (/etc/gpufed/gpufed.yaml in the "
      "package): repository, state, listen, tls {cert, key, clientCA}, allowPlaintext, tokens, metricsListen, "
      "scenario, speed, maxTime, resync, drainTimeout, checkpointInterval, maxBody, log {level, format}, "
      "auditKey, auditSegmentSize, auditArchive");
  cmd->add_flag("--allow-plaintext", o->rt.allow_plaintext,
                "Serve plain HTTP on an address that is not loopback (behind a TLS-terminating proxy, say); "
                "without it such a --listen or --metrics-listen needs TLS");
  cmd->add_option("--state", o->rt.state_dir, "State folder: store, journal, connector ledgers")->capture_default_str();
  cmd->add_option("--listen", o->rt.listen, "Serve the HTTP API on ADDR:PORT (port 0: any free port)");
  cmd->add_flag("--until-idle", o->rt.until_idle, "Exit 0 once nothing is pending or running");
  cmd->add_option("--scenario", o->rt.scenario, "Simulation scenario (default: <config>/simulation/scenario.yaml)");
  cmd->add_option("--speed", o->speed,
                  "A simulated federation's pace: virtual seconds per wall second (0: as fast as possible; "
                  "default 7200 on a terminal, else 0). Clusters on the wall clock run at its pace")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--tokens", o->rt.tokens_file,
                  "API tokens file: lines 'TOKEN TENANT', 'TOKEN admin' or 'TOKEN metrics' (reads /metrics only; "
                  "docs/metrics.md)");
  cmd->add_option("--tls-cert", o->rt.tls_cert, "Serve HTTPS with this certificate (PEM)");
  cmd->add_option("--tls-key", o->rt.tls_key, "Private key of --tls-cert (PEM)");
  cmd->add_option("--tls-client-ca", o->rt.tls_client_ca,
                  "Mutual TLS (needs --tls-cert): every API client presents a certificate issued by these CAs "
                  "(PEM); tokens still decide what a call may do, the certificate's subject names who made it");
  cmd->add_option("--audit-key", o->rt.audit_key,
                  "The audit log's Ed25519 private key (PEM, mode 0600, kept outside --state; gpufed audit keygen). "
                  "Default: the systemd credential audit-signing.key when the unit passes it (gpufed.service "
                  "does), else <state>/audit/signing.key, made on the first start (a warning)");
  cmd->add_option("--audit-segment-size", o->audit_segment_size,
                  "Start a new audit journal segment once one reaches this size (64MiB, 1MB); gpufed audit archive "
                  "moves whole rotated segments")
      ->capture_default_str();
  cmd->add_option("--audit-archive", o->rt.audit_archive,
                  "The journal's archive folder (gpufed audit archive), read only: the journal's tiles are rebuilt "
                  "from it when they must be");
  cmd->add_option("--max-body", o->max_body,
                  "Largest API request body (1048576, 1MiB, 512KiB; at most 64MiB); larger ones get 413")
      ->capture_default_str();
  cmd->add_option("--metrics-listen", o->rt.metrics_listen,
                  "Serve /metrics without a token on ADDR:PORT (loopback or private addresses only)");
  cmd->add_option("--log-level", o->log_level,
                  "Least severe log line written to standard error: debug, info, warn, error")
      ->capture_default_str();
  cmd->add_option("--log-format", o->log_format,
                  "Log lines on standard error as text ('gpufed run: ...') or json (one object a line: time, level, "
                  "component, message)")
      ->capture_default_str();
  cmd->add_option("--max-time", o->max_time,
                  "Stop after this much controller time (default: 30d of a simulated federation's virtual time; no "
                  "limit on the wall clock)");
  cmd->add_option("--resync", o->resync, "Longest interval between passes")->capture_default_str();
  cmd->add_option("--drain-timeout", o->drain_timeout,
                  "At exit, how long to wait for the AuditSinks to acknowledge every record")
      ->capture_default_str();
  cmd->add_option("--checkpoint-interval", o->checkpoint_interval,
                  "Longest time between signed journal checkpoints while records are appended")
      ->capture_default_str();
  cmd->add_option("--store", o->replica.store_uri,
                  "Keep the store, the journal and the pass snapshots in PostgreSQL (a libpq URI: postgres://...; "
                  "sslmode=verify-full off a Unix socket, the password in a passfile, never in the URI) and run as "
                  "one of several replicas: one leads by a lease, the others stand by (deploy/ha/)");
  cmd->add_option("--replica", o->replica.name, "This replica's name in the lease and /v1/status (default HOST-PID)");
  cmd->add_option("--advertise", o->replica.advertise,
                  "This replica's API as the others redirect writes to it while it leads (https://HOST:PORT)");
  cmd->add_option("--lease-duration", o->lease_duration, "--store: how long a lease lasts unrenewed")
      ->capture_default_str();
  cmd->add_option("--renew-deadline", o->renew_deadline,
                  "--store: a leader stops acting when it could not renew for this long (on its own clock)")
      ->capture_default_str();
  cmd->add_option("--lease-retry", o->lease_retry, "--store: how often the lease is renewed or tried")
      ->capture_default_str();
  cmd->add_flag("--unsafe-no-fsync", o->unsafe_no_fsync,
                "Simulated federations only: do not wait for the disk (a power loss may lose the latest "
                "records; the journal's controller-start record says so)");
  cmd->callback([o, exit_code, registry, build, cmd] {
    if (Status applied = ApplyConfigFile(*cmd, o->config_file); !applied.ok()) {
      std::cerr << "gpufed run: " << applied.message() << "\n";
      *exit_code = 2;
      return;
    }
    if (o->rt.config_dir.empty()) {
      std::cerr << "gpufed run: no policy repository: give --config DIR, or repository: in --config-file\n";
      *exit_code = 2;
      return;
    }
    if (o->rt.audit_key.empty()) {
      o->rt.audit_key = AuditKeyCredential(std::getenv("CREDENTIALS_DIRECTORY"));
      o->audit_key_from_credential = !o->rt.audit_key.empty();
    }
    if (o->rt.state_dir.empty()) {  // "" + "/gpufed.db" would be a file in the root folder
      std::cerr << "gpufed run: --state (or state: in --config-file) is empty: name the state folder\n";
      *exit_code = 2;
      return;
    }
    *exit_code = Run(*o, registry, build);
  });
}

}  // namespace gpufed::cli
