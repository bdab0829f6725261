#include "controller/runtime/replica.h"

#include <unistd.h>

#include <chrono>

#include "controller/common/metrics_text.h"
#include "controller/common/secure_file.h"
#include "controller/ha/fence.h"
#include "controller/ha/lease.h"
#include "controller/ha/replicas.h"
#include "controller/pg/migrations.h"
#include "controller/server/listen_address.h"
#include "controller/server/metrics_server.h"
#include "controller/server/server.h"

namespace gpufed::runtime {
namespace {

std::string DefaultReplicaName() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::snprintf(host, sizeof host, "replica");
  return std::string(host) + "-" + std::to_string(getpid());
}

// Every statement of the election's sessions ends within the renew deadline: an elector
// step that hangs on a dead server must not outlive the term it is renewing.
pg::ConnectOptions ElectionSession(Duration renew_deadline) {
  pg::ConnectOptions o;
  o.statement_timeout = renew_deadline;
  return o;
}

}  // namespace

Result<std::unique_ptr<Replica>> Replica::Open(ReplicaOptions options, AppOptions app,
                                               const connectors::ConnectorRegistry& registry, AppView* view) {
  if (options.name.empty()) options.name = DefaultReplicaName();
  // Every replica's terms append to one journal, which one key signs: a key each replica
  // made in its own state folder would break the chain of checkpoints at every failover.
  if (app.audit_key.empty()) {
    return InvalidArgument(
        "--store: the replicas share one audit journal, so each needs the same log key: give --audit-key "
        "(gpufed audit keygen makes one; the systemd credential audit-signing.key works too)");
  }
  if (!options.advertise.empty()) {
    if (Status s = ha::CheckAdvertisedUrl(options.advertise); !s.ok())
      return Status(s.code(), "--advertise: " + s.message());
  }
  ha::ElectorOptions eo;
  eo.identity = options.name;
  eo.lease_duration = options.lease_duration;
  eo.renew_deadline = options.renew_deadline;
  eo.retry_period = options.retry_period;
  if (Status s = eo.Validate(); !s.ok()) {
    return Status(s.code(), "--lease-duration, --renew-deadline, --lease-retry: " + s.message());
  }
  Result<pg::ConnectionPolicy> policy = pg::ConnectionPolicy::Parse(options.store_uri);
  if (!policy.ok()) return Status(policy.status().code(), "--store: " + policy.status().message());
  // The state folder holds this replica's own files (the admin token, the connectors'
  // ledgers, the journal's tiles): made before the standby's listener reads the token.
  for (const std::string& dir : {app.state_dir, app.state_dir + "/connectors"}) {
    Result<std::optional<ModeChange>> made = MakePrivateFolder(dir);
    if (!made.ok()) return Status(made.status().code(), "state folder: " + made.status().message());
  }
  std::unique_ptr<Replica> r(new Replica(std::move(options), std::move(app), registry, view));
  r->policy_ = *policy;
  const std::string where = "--store " + policy->Redacted();
  const pg::ConnectOptions session = ElectionSession(r->options_.renew_deadline);
  Result<std::unique_ptr<pg::Connection>> setup = pg::Connection::Open(*policy, session);
  if (!setup.ok()) return Status(setup.status().code(), where + ": " + setup.status().message());
  if (Status s = pg::Migrate(**setup, ha::kMigrationComponent, ha::LeaseMigrations()); !s.ok()) {
    return Status(s.code(), where + ": " + s.message());
  }
  if (!r->options_.advertise.empty()) {
    if (Status s = ha::AnnounceReplica(**setup, r->options_.name, r->options_.advertise); !s.ok()) {
      return Status(s.code(), where + ": " + s.message());
    }
  }
  {
    MutexLock lock(r->lookup_mu_);
    r->lookup_ = std::move(setup).value();
  }
  const pg::ConnectionPolicy connect_policy = *policy;
  Result<std::unique_ptr<ha::Elector>> elector = ha::Elector::Create(
      eo, r->clock_, [connect_policy, session]() { return pg::Connection::Open(connect_policy, session); });
  if (!elector.ok()) return elector.status();
  r->elector_ = std::move(elector).value();
  r->log().Info("ha", "replica " + r->options_.name + " on " + where + " (lease " +
                          r->options_.lease_duration.ToString() + ", renew deadline " +
                          r->options_.renew_deadline.ToString() + ", retry " + r->options_.retry_period.ToString() +
                          ")");
  return r;
}

Replica::~Replica() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (elect_thread_.joinable()) elect_thread_.join();
  standby_api_.reset();
  standby_metrics_.reset();
  standby_reads_.reset();
}

void Replica::Elect() {
  std::unique_lock<std::mutex> lock(stop_mu_);
  while (!stopping_) {
    lock.unlock();
    const Duration due = elector_->Step();
    lock.lock();
    // At most the retry period, and soon enough to notice a stop.
    const int64_t wait_ms = std::clamp<int64_t>(due.millis(), 10, 500);
    stop_cv_.wait_for(lock, std::chrono::milliseconds(wait_ms), [this] { return stopping_; });
  }
  lock.unlock();
  // A clean stop: a standby takes over at its next retry, not at the lease's expiry.
  if (Status released = elector_->Release(); !released.ok()) {
    log().Warn("ha", "releasing the lease: " + released.ToString());
  }
}

nlohmann::json Replica::StatusJson() const {
  nlohmann::json body = {{"replica", options_.name}, {"role", leading_.load() ? "leader" : "standby"}};
  if (std::optional<ha::LeaseRecord> lease = elector_->Observed(); lease) {
    body["leader"] = lease->expired ? "" : lease->holder;
    body["epoch"] = lease->epoch;
    body["leaseExpired"] = lease->expired;
  } else {
    body["leader"] = "";
  }
  if (Status error = elector_->LastError(); !error.ok()) body["lastError"] = error.ToString();
  return body;
}

std::string Replica::MetricsText() const {
  using T = gpufed::MetricsText::Type;
  gpufed::MetricsText m;
  const ha::ElectorCounters counters = elector_->Counters();
  m.Family("gpufed_leader", T::kGauge, "1 while this replica leads (runs the loop, acts and journals), else 0.");
  m.Sample({{"replica", options_.name}}, leading_.load() ? 1 : 0);
  m.Family("gpufed_leader_changes_total", T::kCounter,
           "New lease epochs this replica saw (its own takeovers included).");
  m.Sample(static_cast<double>(counters.leader_changes));
  m.Family("gpufed_lease_renew_failures_total", T::kCounter,
           "Renewals of the lease that failed while this replica led (an error, or another holder).");
  m.Sample(static_cast<double>(counters.renew_failures));
  return m.str();
}

std::optional<std::string> Replica::LeaderUrl() {
  std::optional<ha::LeaseRecord> lease = elector_->Observed();
  if (!lease || lease->expired || lease->holder == options_.name) return std::nullopt;
  MutexLock lock(lookup_mu_);
  if (lease->holder == looked_up_holder_ && looked_up_url_) return looked_up_url_;
  if (lookup_ == nullptr || !lookup_->Healthy()) {
    Result<std::unique_ptr<pg::Connection>> opened =
        pg::Connection::Open(*policy_, ElectionSession(options_.renew_deadline));
    if (!opened.ok()) return std::nullopt;
    lookup_ = std::move(opened).value();
  }
  Result<std::optional<std::string>> url = ha::ReplicaApiUrl(*lookup_, lease->holder);
  if (!url.ok()) return std::nullopt;
  looked_up_holder_ = lease->holder;
  looked_up_url_ = *url;
  return looked_up_url_;
}

Status Replica::StartStandby() {
  const AppOptions& o = app_options_;
  if (!o.listen.empty() && standby_api_ == nullptr) {
    Result<server::ServerOptions> so =
        server::MakeServerOptions(o.listen, o.tokens_file, o.tls_cert, o.tls_key, o.state_dir);
    if (!so.ok()) return so.status();
    server::StandbyOptions sb;
    sb.host = so->host;
    sb.port = so->port;
    sb.tokens = so->tokens;
    sb.tls_cert = o.tls_cert;
    sb.tls_key = o.tls_key;
    sb.tls_client_ca = o.tls_client_ca;
    sb.status = [this] { return StatusJson(); };
    sb.leader_url = [this] { return LeaderUrl(); };
    sb.metrics = [this] { return MetricsText(); };
    // Its own read-only session, opened at the first read (the elector's never waits for it).
    if (standby_reads_ == nullptr) standby_reads_ = StandbyReads::OnPostgres(*policy_, clock_);
    sb.reads = standby_reads_.get();
    sb.views = standby_reads_.get();  // the leader's published views, on the same session
    Result<std::unique_ptr<server::StandbyServer>> started = server::StandbyServer::Start(std::move(sb));
    if (!started.ok()) return started.status();
    standby_api_ = std::move(started).value();
  }
  if (!o.metrics_listen.empty() && standby_metrics_ == nullptr) {
    Result<server::MetricsEndpoint> endpoint = server::ParseMetricsListen(o.metrics_listen);
    if (!endpoint.ok()) return endpoint.status();
    server::StandbyOptions sb;
    sb.host = endpoint->host;
    sb.port = endpoint->port;
    sb.metrics_only = true;
    sb.status = [this] { return StatusJson(); };
    sb.leader_url = [] { return std::optional<std::string>(); };
    sb.metrics = [this] { return MetricsText(); };
    Result<std::unique_ptr<server::StandbyServer>> started = server::StandbyServer::Start(std::move(sb));
    if (!started.ok()) return started.status();
    standby_metrics_ = std::move(started).value();
  }
  return Status::Ok();
}

std::optional<int> Replica::Lead(const ha::FenceToken& token, RunSignals* signals) {
  // The leader's API takes the standby's address; the standby's read session ends.
  standby_api_.reset();
  standby_metrics_.reset();
  standby_reads_.reset();
  log().Info("ha", "replica " + options_.name + " leads (epoch " + std::to_string(token.epoch) +
                       "): loading the state from the database");
  AppOptions ao = app_options_;
  ao.signals = signals;
  ao.handle_signals = false;
  SharedStore shared;
  shared.uri = options_.store_uri;
  shared.epoch = token.epoch;
  shared.replica = options_.name;
  // Sent with each write transaction's first statement (one round trip for both): every
  // user of it ends its transaction in a COMMIT it checks, which the refusal fails.
  shared.fence = [token](pg::Transaction& tx) { return ha::DeferFenceCheck(tx, token); };
  shared.still_leading = [this, token]() -> Status {
    std::optional<ha::FenceToken> now = elector_->Token();
    if (now && now->epoch == token.epoch) return Status::Ok();
    std::optional<ha::LeaseRecord> lease = elector_->Observed();
    std::string why = "epoch " + std::to_string(token.epoch) + " ended";
    if (lease && lease->holder != options_.name)
      why += "; " + lease->holder + " holds epoch " + std::to_string(lease->epoch);
    if (!now && !(lease && lease->holder != options_.name))
      why += " (the lease was not renewed within the renew deadline)";
    return FailedPrecondition(why);
  };
  shared.status = [this] { return StatusJson(); };
  shared.metrics = [this] { return MetricsText(); };
  ao.shared = std::move(shared);
  Result<std::unique_ptr<App>> app = App::Open(ao, registry_, view_);
  if (!app.ok()) {
    // A term that ended while the App opened (fenced) or a database away: back to standby.
    // Anything else (a repository that does not activate, a listener that cannot bind)
    // would fail every term the same way: the run ends, as one process's would.
    if (ha::IsFenced(app.status()) || app.status().code() == StatusCode::kUnavailable || !elector_->IsLeader()) {
      log().Warn("ha", "this term could not start (" + app.status().ToString() + "); standing by");
      return std::nullopt;
    }
    log().Error("ha", "gpufed run: " + app.status().ToString());
    return 1;
  }
  leading_ = true;
  const int code = (*app)->Run();
  leading_ = false;
  app->reset();
  if (code == App::kLostLeadExit) return std::nullopt;
  return code;
}

int Replica::Run() {
  std::unique_ptr<RunSignals> signals = app_options_.handle_signals ? std::make_unique<RunSignals>() : nullptr;
  auto signalled = [&] { return signals != nullptr && signals->requested() != 0; };
  elect_thread_ = std::thread([this] { Elect(); });
  int exit_code = 0;
  // A term that ended while this replica still holds the lease (its journal failed, or it
  // could not start: a database away) is tried again after a retry period, not at once and
  // over and over; meanwhile the standby's listener answers (a write: 503 with the reason).
  std::optional<std::chrono::steady_clock::time_point> lead_again_at;
  while (!signalled()) {
    if (Status s = StartStandby(); !s.ok()) {
      log().Error("ha", "standby listener: " + s.ToString());
      exit_code = 1;
      break;
    }
    std::optional<ha::FenceToken> token = elector_->Token();
    if (!token || (lead_again_at && std::chrono::steady_clock::now() < *lead_again_at)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the elector's thread decides; polled
      continue;
    }
    std::optional<int> ended = Lead(*token, signals.get());
    if (ended) {
      exit_code = *ended;
      break;
    }
    lead_again_at = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.retry_period.millis());
  }
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (elect_thread_.joinable()) elect_thread_.join();  // releases the lease if this replica led
  standby_api_.reset();
  standby_metrics_.reset();
  standby_reads_.reset();
  return exit_code;
}

}  // namespace gpufed::runtime
