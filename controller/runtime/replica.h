#pragma once
// `gpufed run --store postgres://...`: one of several replicas that share the store and
// the journal in one PostgreSQL database (issue 38). One of them leads; the others are
// standbys that wait to take over.
//
//   standby: the elector (controller/ha) tries the lease every retry period; the API
//            listener is a StandbyServer (server/standby_server.h: status, metrics, the
//            workload reads from the database through StandbyReads' read-only session,
//            and a 307 to the leader for everything else).
//   leader:  the lease is taken with a new epoch. The standby listener stops and an App
//            opens as for one process, but on the shared store: it loads its state from
//            the database, observes every cluster and adopts the attempts it finds before
//            it places (the App's start and first pass), and every write transaction it
//            makes is fenced by the term's epoch (ha::CheckFence). The App checks before
//            every pass that the term goes on (SharedStore::still_leading).
//   the term ends (the renew deadline passed on this replica's clock, the database named
//            another holder, or a write was fenced): the App stops at once, writing
//            nothing, and the replica is a standby again; it can lead again only in a new
//            term (a new epoch).
// A stop signal ends the run from either role; a leader then closes its App as one
// process does (controller-stop, the final checkpoint, the sinks' drain) and releases the
// lease, so a standby takes over at its next retry instead of at the lease's expiry.
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "connectors/core/registry.h"
#include "controller/common/clock.h"
#include "controller/common/mutex.h"
#include "controller/ha/elector.h"
#include "controller/pg/connection.h"
#include "controller/pg/connection_policy.h"
#include "controller/runtime/app.h"
#include "controller/runtime/standby_reads.h"
#include "controller/server/standby_server.h"

namespace gpufed::runtime {

struct ReplicaOptions {
  std::string store_uri;  // libpq URI; the pg layer's rules (pg/connection_policy.h)
  // This replica's name in the lease and in /v1/status; unique per process (empty:
  // HOSTNAME-PID).
  std::string name;
  // This replica's API as other replicas redirect to it (https://HOST:PORT); empty: none
  // announced, and standbys answer writes 503 while this replica leads.
  std::string advertise;
  Duration lease_duration = Duration::FromSeconds(15);
  Duration renew_deadline = Duration::FromSeconds(10);
  Duration retry_period = Duration::FromSeconds(2);
};

class Replica {
 public:
  // Checks the options, connects, migrates the election's tables and announces this
  // replica's API. Nothing leads yet (Run does).
  static Result<std::unique_ptr<Replica>> Open(ReplicaOptions options, AppOptions app,
                                               const connectors::ConnectorRegistry& registry, AppView* view);
  ~Replica();
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  // Standby and leader terms until a stop signal (or, as leader, --until-idle or
  // --max-time); returns the process's exit code.
  int Run();

  const std::string& name() const { return options_.name; }

 private:
  Replica(ReplicaOptions options, AppOptions app, const connectors::ConnectorRegistry& registry, AppView* view)
      : options_(std::move(options)), app_options_(std::move(app)), registry_(registry), view_(view) {}

  void Elect();  // the elector's thread
  // One leader term: opens the App, runs it until the term or the run ends. Returns the
  // run's exit code, or nullopt when the term ended and the replica goes on as a standby.
  std::optional<int> Lead(const ha::FenceToken& token, RunSignals* signals);
  Status StartStandby();
  nlohmann::json StatusJson() const;
  std::string MetricsText() const;
  std::optional<std::string> LeaderUrl() EXCLUDES(lookup_mu_);
  const Logger& log() const { return app_options_.log != nullptr ? *app_options_.log : default_log_; }

  const ReplicaOptions options_;
  const AppOptions app_options_;
  const connectors::ConnectorRegistry& registry_;
  AppView* const view_;
  Logger default_log_{&std::cerr, LogLevel::kInfo, LogFormat::kText};
  gpufed::SystemClock clock_;  // the elector's local clock (monotonic enough for its deadlines)
  std::optional<pg::ConnectionPolicy> policy_;
  std::unique_ptr<ha::Elector> elector_;
  std::atomic<bool> leading_{false};  // an App of this replica is open (for /v1/status)

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by stop_mu_
  std::thread elect_thread_;

  // The leader's URL as standbys redirect to it, looked up by holder and kept.
  Mutex lookup_mu_;
  std::unique_ptr<pg::Connection> lookup_ GUARDED_BY(lookup_mu_);
  std::string looked_up_holder_ GUARDED_BY(lookup_mu_);
  std::optional<std::string> looked_up_url_ GUARDED_BY(lookup_mu_);

  // Declared before the listener that reads through it, so it is destroyed after.
  std::unique_ptr<StandbyReads> standby_reads_;
  std::unique_ptr<server::StandbyServer> standby_api_;
  std::unique_ptr<server::StandbyServer> standby_metrics_;
};

}  // namespace gpufed::runtime
