#include "controller/reconcile/controller.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "controller/audit/records.h"
#include "controller/config/repository.h"
#include "controller/reconcile/request_journal.h"

namespace gpufed::reconcile {

using store::WorkloadRecord;

namespace {

// A read-only loop's decision log: a preview decides nothing durable.
class DiscardDecisionLog : public DecisionLog {
 public:
  Status Record(const placement::Decision&, const DecisionContext&) override { return Status::Ok(); }
};

}  // namespace

Result<std::unique_ptr<Controller>> Controller::Open(const ControllerOptions& options, const LoopParts& parts) {
  if (parts.store == nullptr || parts.activator == nullptr || parts.activator->active() == nullptr ||
      parts.registry == nullptr || parts.clock == nullptr) {
    return InvalidArgument("the loop needs a store, an active revision, a connector registry and a clock");
  }
  std::unique_ptr<Controller> c(new Controller(options, parts));
  GPUFED_RETURN_IF_ERROR(c->Start());
  return c;
}

Status Controller::Start() {
  // Nothing else runs yet; the lock is for the analysis (what it guards is set up here).
  MutexLock lock(mu_);
  DecisionLog* decisions = nullptr;
  if (read_only()) {
    discard_log_ = std::make_unique<DiscardDecisionLog>();
    decisions = discard_log_.get();
  } else {
    journal_log_ = std::make_unique<JournalDecisionLog>(journal_, &audit_->snapshots(), options_.config_dir,
                                                        store_writes_in_journal_);
    metrics_log_ = std::make_unique<MetricsDecisionLog>(&pass_metrics_);
    // Journal first: a decision is acted on only once the tamper-evident log holds it. The
    // store's rows of a decision are the loop's to write (Reconciler::CommitDecisions).
    tee_ = std::make_unique<TeeDecisionLog>(std::vector<DecisionLog*>{journal_log_.get(), metrics_log_.get()});
    decisions = tee_.get();
    // Every submission, from any source, is journalled before the store keeps it.
    store_->SetSubmissionJournal(JournalSubmissionsTo(journal_, clock_, store_writes_in_journal_));
  }
  budget_ = std::make_unique<BudgetWatch>(store_);
  history_ = std::make_unique<History>(store_);
  if (!read_only()) GPUFED_RETURN_IF_ERROR(history_->Restore(clock_->Now()));
  reconciler_ = std::make_unique<Reconciler>(store_, decisions, clock_, options_.reconcile);
  reconciler_->SetSubmittedSpecs(&submitted_specs_);
  if (!read_only()) {
    reconciler_->SetActionObserver(
        [log = journal_log_.get()](const std::vector<ActionResult>& results) { log->RecordActions(results); });
  }
  reconciler_->SetRevision(activator_->active());
  PublishApiLimits();
  GPUFED_RETURN_IF_ERROR(CreateConnectors());
  // The tenants' past use as last saved (read only: the ledger is saved by passes).
  GPUFED_RETURN_IF_ERROR(reconciler_->RestoreFairShare());
  if (read_only()) return Status::Ok();
  Status synced = reconciler_->SyncRepositoryWorkloads();
  if (!synced.ok() && !journal_log_->health().ok()) {
    // The journal cannot take the repository's new workloads, so the store does not keep
    // them: the loop comes up not ready and places nothing, as for any journal failure.
    notices_.push_back("repository workloads not submitted: " + synced.message());
    return Status::Ok();
  }
  return synced;
}

Controller::~Controller() {
  if (!read_only()) store_->SetSubmissionJournal(nullptr);  // the journal is the App's
}

void Controller::Stop() {
  MutexLock pass_lock(pass_mu_);
  MutexLock lock(mu_);
  if (stopped_) return;
  stopped_ = true;
  // Best effort: a store that cannot be written now loses at most kFairShareSaveEvery of usage.
  if (!read_only()) (void)reconciler_->SaveFairShare(true);
}

Result<placement::Plan> Controller::Preview() {
  MutexLock pass_lock(pass_mu_);
  MutexLock lock(mu_);
  return reconciler_->Preview();
}

Status Controller::CreateConnectors() {
  Result<ConnectorSet::Prepared> made = reconciler_->PrepareConnectors(*activator_->active(), ConnectorMaker());
  if (!made.ok()) return made.status();
  (void)reconciler_->CommitConnectors(std::move(made).value());
  return Status::Ok();
}

ConnectorSet::Maker Controller::ConnectorMaker() const {
  return RegistryMaker(registry_, clock_, options_.state_dir,
                       read_only() ? ConnectorAccess::kReadOnly : ConnectorAccess::kReadWrite, logger_,
                       options_.reconcile.leader_epoch);
}

void Controller::JournalConnectorChanges(const std::vector<ConnectorSet::Change>& changes,
                                         const std::map<std::string, int>& removed_with_work) {
  const std::string& revision = activator_->active()->config.revision;
  for (const ConnectorSet::Change& c : changes) {
    auto work = removed_with_work.find(c.cluster);
    (void)journal_->Append(
        audit::ClusterConnectorRecord({c.cluster, ConnectorSet::ChangeKindName(c.kind), c.connector_type, revision,
                                       work == removed_with_work.end() ? 0 : work->second}));
    notices_.push_back("cluster " + c.cluster + ": connector " + ConnectorSet::ChangeKindName(c.kind) +
                       (work != removed_with_work.end() ? " (" + std::to_string(work->second) +
                                                              " attempt(s) still run there; observed until they end)"
                                                        : ""));
  }
}

Status Controller::Reload() {
  MutexLock pass_lock(pass_mu_);
  MutexLock lock(mu_);
  if (stopped_ || read_only()) return FailedPrecondition("the controller has stopped or is read-only");
  std::string before = activator_->active()->config.revision;
  // A revision whose clusters cannot all get a connector is rejected whole, like one that
  // fails validation: the last good revision keeps its connectors.
  std::optional<ConnectorSet::Prepared> connectors;
  auto make_connectors = [&](const policy::Revision& candidate) -> std::vector<std::string> {
    Result<ConnectorSet::Prepared> made = reconciler_->PrepareConnectors(candidate, ConnectorMaker());
    if (!made.ok()) return {"connector: " + made.status().message()};
    connectors.emplace(std::move(made).value());
    return {};
  };
  Status s = activator_->Reload({options_.config_dir}, make_connectors);
  if (!s.ok()) {
    pass_metrics_.OnRevisionRejected();
    (void)journal_->Append(audit::PolicyRejectedRecord(activator_->rejected_revision(), options_.config_dir,
                                                       activator_->last_rejection()));
    std::string why;
    for (const std::string& p : activator_->last_rejection()) why += "; " + p;
    return FailedPrecondition("revision " + activator_->rejected_revision() + " rejected, " +
                              config::ShortRevision(before) + " keeps serving" + why);
  }
  const policy::Revision* active = activator_->active();
  const std::map<std::string, int> removed_with_work = reconciler_->ActiveOnRemoved(*active);
  if (active->config.revision != before) {
    (void)journal_->Append(audit::PolicyActivatedRecord(active->config.revision, options_.config_dir,
                                                        active->tests.passed, removed_with_work));
  }
  reconciler_->SetRevision(active);
  if (connectors) JournalConnectorChanges(reconciler_->CommitConnectors(std::move(*connectors)), removed_with_work);
  PublishApiLimits();
  return reconciler_->SyncRepositoryWorkloads();
}

void Controller::PublishApiLimits() {
  std::map<std::string, ApiLimit> limits;
  for (const model::Tenant& t : activator_->active()->config.tenants) {
    const int burst = t.api_burst > 0 ? t.api_burst : std::max(1, static_cast<int>(std::ceil(t.api_rate_per_second)));
    limits[t.metadata.name] = {t.api_rate_per_second, burst, t.api_max_concurrent_requests};
  }
  MutexLock lock(limits_mu_);
  api_limits_ = std::move(limits);
  api_revision_ = activator_->shared_active();
}

Controller::ApiLimit Controller::ApiLimitOf(const std::string& tenant) {
  MutexLock lock(limits_mu_);
  auto it = api_limits_.find(tenant);
  return it == api_limits_.end() ? ApiLimit{} : it->second;  // a tenant no revision knows: the defaults
}

Result<PassStats> Controller::Pass() {
  MutexLock pass_lock(pass_mu_);
  {
    MutexLock lock(mu_);
    if (stopped_) return FailedPrecondition("the controller has stopped");
    if (read_only()) return FailedPrecondition("a read-only controller runs no pass");
  }
  // Connector calls without the API's lock: submissions, lists and metrics are served
  // while a slow cluster runs into its timeout. pass_mu_ keeps Reload and Stop out.
  Observations observed = reconciler_->Collect();
  MutexLock lock(mu_);
  if (stopped_) return FailedPrecondition("the controller has stopped");
  // Write-ahead: nothing new is placed while the journal cannot record it, nor while a
  // sink that asked for it (onLagLimit: pause) is behind.
  const bool sink_pause = JournalSinkLag();
  bool placing = journal_log_->health().ok() && !sink_pause;
  reconciler_->SetPlacing(placing);
  auto start = std::chrono::steady_clock::now();
  Result<PassStats> stats = reconciler_->Pass(std::move(observed));
  PublishReadinessLocked();
  if (stats.ok()) JournalConnectorChanges(stats->retired);
  JournalPolicyHealth();
  if (stats.ok()) JournalBudgetAlerts();
  (void)journal_->MaybeCheckpoint();
  if (shipping_ != nullptr) shipping_->Wake();
  if (!stats.ok() && !journal_log_->health().ok()) {
    // Retryable for the run loop: the controller stays up (not ready) instead of exiting.
    return Unavailable("audit journal cannot be written, placement stopped: " + journal_log_->health().ToString());
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (pass_seconds_.size() < 100000) pass_seconds_.push_back(seconds);
  ++passes_;
  pass_metrics_.OnPass(seconds, reconciler_->decision_seconds());
  const Duration now = clock_->Now();
  offered_.Observe(now, reconciler_->clusters());
  if (stats.ok() && history_->Due(now)) {
    Result<std::vector<TenantView>> tenants = TenantViewsLocked();
    Status sampled =
        tenants.ok()
            ? history_->Sample(now, ViewClusters(activator_->active()->config, reconciler_->clusters()), *tenants)
            : tenants.status();
    // The charts miss a point; placement goes on.
    if (!sampled.ok()) notices_.push_back("dashboard history: " + sampled.ToString());
  }
  if (metrics_wanted_.exchange(false)) {
    std::string text = RenderMetricsLocked();
    MutexLock cached(metrics_cache_mu_);
    metrics_cache_ = std::move(text);
  }
  return stats;
}

void Controller::AddSourceSpecs(const std::string& source, std::vector<model::Workload> specs) {
  MutexLock lock(mu_);
  reconciler_->AddSpecs(source, std::move(specs));
}

Status Controller::SubmitFromSource(const model::Workload& w, const std::string& source) {
  MutexLock lock(mu_);
  Result<std::optional<WorkloadRecord>> known = store_->Get(w.tenant, w.metadata.name);
  if (!known.ok()) return known.status();
  if (*known) return Status::Ok();
  WorkloadRecord r;
  r.name = w.metadata.name;
  r.tenant = w.tenant;
  r.source = source;
  r.submitted = w.submitted_at;
  r.gpu_milli = int64_t{w.resources.total_gpus()} * 1000;
  // The journal names the source as the principal (`scenario`, common/vocabulary.h).
  store::SubmissionFacts facts = SubmissionFactsOf(w, r.submitted, source, activator_->active()->config.revision);
  // The uid scheme of every source: `<name>-u<N>` from the store.
  return store_->SubmitNumbered(std::move(r), clock_->Now(), std::move(facts)).status();
}

bool Controller::Idle() {
  MutexLock lock(mu_);
  Result<std::vector<WorkloadRecord>> all = store_->ListUnfinished();
  if (!all.ok()) return false;
  for (const WorkloadRecord& r : *all) {
    if (!store::IsTerminal(r.state)) return false;
  }
  return true;
}

bool Controller::Stuck() {
  MutexLock lock(mu_);
  if (reconciler_->NextEvent().millis() > 0) return false;
  Result<std::vector<WorkloadRecord>> all = store_->ListUnfinished();
  if (!all.ok()) return false;
  for (const WorkloadRecord& r : *all) {
    if (store::IsActive(r.state) || r.state == store::WorkloadState::kPreempted) return false;
  }
  return true;
}

Duration Controller::NextEvent() {
  MutexLock lock(mu_);
  return reconciler_->NextEvent();
}

// audit_health, active_revision and ready serve /readyz and /v1/status: none waits for
// mu_, which a pass holds throughout (seconds, for a new leader's first pass over a long
// queue: a probe with a timeout would call the leader unready, and a client looking for
// the leader would not find it).
Status Controller::audit_health() {
  if (read_only()) return FailedPrecondition("read-only: no audit journal is open");
  return journal_log_->health();  // thread-safe (journal_log.h)
}

std::string Controller::active_revision() {
  MutexLock lock(limits_mu_);
  return api_revision_ != nullptr ? api_revision_->config.revision : std::string();
}

bool Controller::ready() {
  if (read_only() || !journal_log_->health().ok()) return false;
  return observed_and_shipping_.load(std::memory_order_acquire);
}

void Controller::PublishReadinessLocked() {
  bool ready = false;
  for (const auto& [name, cs] : reconciler_->clusters()) ready = ready || cs.observed;
  if (shipping_ != nullptr) {
    for (const audit::SinkStatus& s : shipping_->Sinks()) ready = ready && !s.lagging;
  }
  observed_and_shipping_.store(ready, std::memory_order_release);
}

}  // namespace gpufed::reconcile

namespace gpufed::reconcile {

std::map<std::string, double> Controller::OfferedGpuSeconds() {
  MutexLock lock(mu_);
  return offered_.Until(clock_->Now());
}

Controller::PassTimes Controller::pass_stats() {
  std::vector<double> sorted;
  PassTimes t;
  {
    MutexLock lock(mu_);
    t.passes = passes_;
    sorted = pass_seconds_;
  }
  if (sorted.empty()) return t;
  double sum = 0;
  for (double s : sorted) sum += s;
  t.mean = sum / static_cast<double>(sorted.size());
  std::sort(sorted.begin(), sorted.end());
  // Nearest rank: the smallest sample with at least q of the samples at or below it.
  auto rank = [&](double q) {
    size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    return sorted[std::min(sorted.size() - 1, k == 0 ? 0 : k - 1)];
  };
  t.p50 = rank(0.50);
  t.p99 = rank(0.99);
  return t;
}

void Controller::AttachShipping(audit::LiveShipping* shipping) {
  MutexLock lock(mu_);
  shipping_ = shipping;
  PublishReadinessLocked();
}

void Controller::AttachWitnessing(audit::LiveWitnessing* witnessing) {
  MutexLock lock(mu_);
  witnessing_ = witnessing;
}

std::vector<model::AuditWitness> Controller::AuditWitnesses() {
  MutexLock lock(mu_);
  return activator_->active()->config.audit_witnesses;
}

std::vector<audit::WitnessStatus> Controller::Witnesses() {
  MutexLock lock(mu_);
  return witnessing_ == nullptr ? std::vector<audit::WitnessStatus>{} : witnessing_->Witnesses();
}

std::vector<model::AuditSink> Controller::AuditSinks() {
  MutexLock lock(mu_);
  return activator_->active()->config.audit_sinks;
}

std::string Controller::repo_root() {
  MutexLock lock(mu_);
  return activator_->active()->config.root;
}

std::vector<std::string> Controller::LaggingSinks() {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  if (shipping_ == nullptr) return out;
  for (const audit::SinkStatus& s : shipping_->Sinks()) {
    if (s.lagging) out.push_back(s.name);
  }
  return out;
}

std::vector<std::string> Controller::TakeNotices() {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  out.swap(notices_);
  return out;
}

bool Controller::JournalSinkLag() {
  if (shipping_ == nullptr) return false;
  for (const audit::SinkLagChange& change : shipping_->TakeLagChanges()) {
    // A failed append leaves the journal unhealthy, which stops placing on its own.
    (void)journal_->Append(audit::SinkLagRecord(change));
    notices_.push_back(change.lagging ? "audit sink " + change.sink + " lags " + std::to_string(change.lag_records) +
                                            " records / " + std::to_string(change.lag_millis / 1000) +
                                            " s, past its lag limit (onLagLimit: " + change.action + ")"
                                      : "audit sink " + change.sink + " caught up (acknowledged seq " +
                                            std::to_string(change.acknowledged) + ")");
  }
  for (const audit::SinkStatus& s : shipping_->Sinks()) {
    if (s.lagging && s.on_lag_limit == model::LagAction::kPause) return true;
  }
  return false;
}

void Controller::JournalPolicyHealth() {
  const policy::Revision* revision = activator_->active();
  if (revision == nullptr || revision->hooks == nullptr) return;
  for (const audit::PolicyDegradedEvent& e :
       policy_health_.AfterPass(revision->hooks->TakeCallStats(), revision->config)) {
    // A failed append leaves the journal unhealthy, which stops placing on its own.
    (void)journal_->Append(audit::PolicyDegradedRecord(e));
    char budget[32];
    std::snprintf(budget, sizeof budget, "%g%%", e.error_budget * 100);
    notices_.push_back("policy " + e.policy + " degraded: " + std::to_string(e.errors) + " of " +
                       std::to_string(e.calls) + " hook calls failed this pass (errorBudget " + budget +
                       "); last: " + e.last_error);
  }
}

void Controller::JournalBudgetAlerts() {
  const Duration now = clock_->Now();
  Result<std::vector<BudgetCrossing>> crossings = budget_->NewCrossings(activator_->active()->config, now);
  if (!crossings.ok()) {
    notices_.push_back("budget alerts: " + crossings.status().ToString());
    return;
  }
  for (const BudgetCrossing& c : *crossings) {
    audit::BudgetAlertEvent e{c.tenant, c.period_label, c.scope, c.level, c.spent.ToString(), c.limit.ToString()};
    // Journal first, then remember: a crash in between reports the level again, never not.
    if (!journal_->Append(audit::BudgetAlertRecord(e)).ok()) return;
    if (Status s = budget_->Remember(c, now); !s.ok()) notices_.push_back("budget alerts: " + s.ToString());
    notices_.push_back("ALERT: " + c.message);
  }
}

}  // namespace gpufed::reconcile
