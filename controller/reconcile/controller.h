#pragma once
// The reconcile loop and its read views: the connectors it drives (one per Cluster of the
// active revision), the decision logs, fair share, budgets and the dashboard's history,
// over a store, an audit trail and a policy activator that the App (runtime/app.h) owns,
// opens before the loop and closes after it. The run loop calls Pass; the server calls the
// API methods. The observe phase's connector calls run outside the lock the API takes.
// Tenants: an empty tenant means the caller is an admin (sees and cancels everything).
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "connectors/core/registry.h"
#include "controller/audit/audit_trail.h"
#include "controller/audit/live_shipping.h"
#include "controller/audit/live_witnessing.h"
#include "controller/common/build_info.h"
#include "controller/common/mutex.h"
#include "controller/reconcile/budget_watch.h"
#include "controller/reconcile/fleet_view.h"
#include "controller/reconcile/history.h"
#include "controller/reconcile/journal_log.h"
#include "controller/reconcile/offered_gpu_time.h"
#include "controller/reconcile/pass_metrics.h"
#include "controller/reconcile/policy_health.h"
#include "controller/reconcile/read_views.h"
#include "controller/reconcile/reconciler.h"
#include "controller/reconcile/request_journal.h"
#include "controller/reconcile/scoped_reads.h"

namespace gpufed::reconcile {

struct ControllerOptions {
  std::string config_dir;                  // the repository Reload reads again
  std::string state_dir = "gpufed-state";  // the connectors' folders are <state_dir>/connectors/<cluster>
  ReconcilerOptions reconcile;
  BuildInfo build;                         // what the binary is (/metrics' gpufed_build_info)
};

// What the App owns and lends to the loop; each must outlive the Controller.
struct LoopParts {
  store::Store* store = nullptr;
  policy::PolicyActivator* activator = nullptr;  // holds the active revision
  // Null: a read-only loop (`gpufed plan --state`): it journals nothing, writes nothing,
  // drives no connector and serves Preview only.
  audit::AuditTrail* audit = nullptr;
  const connectors::ConnectorRegistry* registry = nullptr;
  const gpufed::Clock* clock = nullptr;
  const Logger* log = nullptr;  // the connectors' log lines; null: standard error
  // How the store's rows commit in the journal's transaction (store_writes_in_journal.h):
  // submission groups' and the loop's decision rows, intents and updates; null: after
  // the journal, on their own.
  StoreWritesInJournal store_writes_in_journal;
};

class Controller {
 public:
  // The loop over the active revision of `parts.activator`: a connector per Cluster
  // (read-only ones for a read-only loop), the tenants' fair share as last saved, and
  // (unless read-only) the dashboard's history and the repository's workloads in the
  // store. A journal that cannot be written leaves the loop up, not ready and not placing.
  static Result<std::unique_ptr<Controller>> Open(const ControllerOptions& options, const LoopParts& parts);
  // Stops for good: waits for a running pass, saves the fair-share ledger, and refuses
  // passes and reloads from then on. Idempotent. Appends nothing: the App closes the
  // journal after it.
  void Stop();
  // Releases the connectors; writes nothing.
  ~Controller();

  // The decisions the next pass would make, on the snapshot a pass builds, with nothing
  // decided, applied or written (`gpufed plan --state`).
  Result<placement::Plan> Preview();

  // Re-reads the repository. OK when the new revision is active; FailedPrecondition
  // (with the reasons) when it was rejected and the last good one keeps serving.
  Status Reload();
  // One reconcile pass.
  Result<PassStats> Pass();
  // Nothing waiting or active.
  bool Idle();
  // Nothing active and no event to come: waiting work can never be placed by time alone.
  bool Stuck();
  Duration NextEvent();

  // A workload source other than the repository and the API (the runtime's scenario):
  // its specs, then each submission when it is due. A name the store already knows is
  // not submitted again (a restarted run). The journal names `source` as the submission's
  // principal.
  void AddSourceSpecs(const std::string& source, std::vector<model::Workload> specs);
  Status SubmitFromSource(const model::Workload& workload, const std::string& source);

  // API. Workloads are namespaced by tenant; `caller` is the token's tenant ("" for an
  // admin). A tenant caller cannot tell another tenant's workload (or tenant) from a
  // missing one: NotFound, never PermissionDenied or AlreadyExists.
  // The calls that change something name whom they come from: the tenant as `caller`
  // above and the principal the journal records (the token's name, server/token_table.h).
  struct Requester {
    std::string tenant;
    std::string principal;
  };
  // Submit: InvalidArgument with the loader's file/line/field messages; `owner` (the
  // path's tenant, may be empty) must be the document's spec.tenant. Journals
  // workload-submitted before the store keeps the workload; Unavailable (and nothing
  // stored) when the journal does not take it.
  Result<store::WorkloadRecord> Submit(const std::string& text, const std::string& file_name, const Requester& by,
                                       const std::string& owner = "");
  // Names a workload (scoped_reads.h): the path's tenant, or empty on the short paths.
  using WorkloadRef = reconcile::WorkloadRef;
  // Journals workload-cancelled (the workload's state when asked) before the cancel is
  // requested, whatever the state; Unavailable (and no cancel) when the journal does not
  // take it.
  Status Cancel(const WorkloadRef& ref, const Requester& by);
  // List, Get and Decisions are scoped_reads.h's on this controller's store (a standby
  // replica answers them with the same functions).
  // `owner` empty: the caller's own workloads (an admin's: everyone's).
  Result<std::vector<store::WorkloadRecord>> List(const std::string& caller, const std::string& owner = "");
  Result<store::WorkloadRecord> Get(const WorkloadRef& ref, const std::string& caller);
  // Every decision for the workload's name in its tenant (each run of a reused name),
  // newest first; an empty name lists the caller's (an admin's: every tenant's). At most
  // kDecisionsPerAnswer.
  Result<std::vector<store::DecisionRow>> Decisions(const WorkloadRef& ref, const std::string& caller);
  // Why pending / why this cluster / why not each other cluster, from the last decision.
  Result<nlohmann::json> Explain(const WorkloadRef& ref, const std::string& caller);
  // A tenant as an item of Tenants(): budget period, spend (metered + running estimates),
  // limits, used ratios, alert level and the alerts reported this period, GPUs in use and
  // fair share. A tenant caller sees only itself (NotFound).
  Result<nlohmann::json> Tenant(const std::string& name, const std::string& caller);
  // Every cluster: health, nodes (elastic ones too), GPUs allocated / capacity per model.
  nlohmann::json Clusters();
  // Every tenant's budget, alert level, GPUs in use and fair share ({"items": [...]}).
  Result<nlohmann::json> Tenants(const std::string& caller);
  // Waiting workloads in the order they are considered (tenant, priority, waited,
  // reason, position) and the histogram of past waits ({"items", "waitHistogram"}).
  Result<nlohmann::json> Queue(const std::string& caller);
  // The last day's samples of the fleet and tenants (history.h), those after `since` when given.
  nlohmann::json HistoryJson(const std::string& caller, std::optional<Duration> since = std::nullopt);
  // Journal head, newest signed checkpoint and each sink's lag.
  nlohmann::json AuditStatus();
  // The views above unscoped, at one moment (read_views.h): what a leader publishes for
  // its standbys, which scope them with the functions these methods use. A queue of more
  // than `max_queue_items` waiting workloads is not rendered (`queue` is null: too large
  // to publish), which saves a long queue's leader its rendering on every publication.
  Result<ReadViews> Views(size_t max_queue_items = SIZE_MAX);
  // A tenant's API limits under the active revision (Tenant.spec.api, with the model's
  // defaults when unset; 0: unlimited). Takes only its own lock, so the server can ask on
  // every request while a pass runs.
  struct ApiLimit {
    double per_second = model::Tenant::kDefaultApiRatePerSecond;
    int burst = model::Tenant::kDefaultApiBurst;
    int max_concurrent_requests = model::Tenant::kDefaultApiMaxConcurrentRequests;
  };
  ApiLimit ApiLimitOf(const std::string& tenant);
  std::string Metrics();
  // These three serve /readyz and /v1/status, and none waits for a pass.
  std::string active_revision();
  // A cluster has been observed (as of the last pass) and the audit journal can be written.
  bool ready();
  // OK while decisions can be journaled; else why placement is stopped.
  Status audit_health();

  // Live shipping to the AuditSinks (owned by the runtime; null: none). Each pass
  // journals the sinks' lag-limit crossings (sink-lagging / sink-recovered), stops
  // placing while an `onLagLimit: pause` sink lags, and wakes the sinks for the records
  // it appended. A lagging sink makes ready() false; Metrics() includes its lag. Detach
  // (nullptr) before destroying it.
  void AttachShipping(audit::LiveShipping* shipping);
  // Live witnessing (owned by the runtime; null: none): Metrics() and /readyz include each
  // witness's state. Detach (nullptr) before destroying it.
  void AttachWitnessing(audit::LiveWitnessing* witnessing);
  // More Prometheus families for Metrics() from the runtime (a replica's election:
  // gpufed_leader, ...). Set before the listeners start; called from their threads.
  void AttachMetrics(std::function<std::string()> more) { more_metrics_ = std::move(more); }
  std::vector<model::AuditWitness> AuditWitnesses();
  std::vector<audit::WitnessStatus> Witnesses();
  // The AuditSinks of the active revision and the repository their TLS paths are relative to.
  std::vector<model::AuditSink> AuditSinks();
  std::string repo_root();
  // The journal's durable head (thread-safe; valid after Stop too).
  uint64_t audit_head() const { return journal_ == nullptr ? 0 : journal_->last_seq(); }
  // Sinks past their lag limit, for /readyz.
  std::vector<std::string> LaggingSinks();
  // Lines for the operator (sink lag episodes) since the last call.
  std::vector<std::string> TakeNotices();

  store::Store* store() { return store_; }
  // Passes run and their wall time in seconds (reconcile throughput). The percentiles are
  // over the kept samples (the first 100,000 passes).
  struct PassTimes {
    int64_t passes = 0;
    double mean = 0;
    double p50 = 0;
    double p99 = 0;
  };
  PassTimes pass_stats();
  // GPU-seconds each cluster offered from this process's first pass until now
  // (offered_gpu_time.h): the run summary's utilisation divides by it.
  std::map<std::string, double> OfferedGpuSeconds() EXCLUDES(mu_);

 private:
  Controller(ControllerOptions options, const LoopParts& parts)
      : options_(std::move(options)),
        registry_(*parts.registry),
        clock_(parts.clock),
        logger_(parts.log),
        activator_(parts.activator),
        store_(parts.store),
        audit_(parts.audit),
        journal_(parts.audit == nullptr ? nullptr : &parts.audit->journal()),
        store_writes_in_journal_(parts.store_writes_in_journal) {}
  bool read_only() const { return audit_ == nullptr; }
  // Wires the decision logs and the reconciler, then makes the connectors.
  Status Start() EXCLUDES(mu_);
  Status CreateConnectors();
  ConnectorSet::Maker ConnectorMaker() const;
  // Journals (cluster-connector) and tells the operator each change to the connector set.
  // Needs mu_.
  void JournalConnectorChanges(const std::vector<ConnectorSet::Change>& changes,
                               const std::map<std::string, int>& removed_with_work = {}) REQUIRES(mu_);
  // Journals the sinks' lag-limit crossings; true while a pause sink lags. Needs mu_.
  bool JournalSinkLag() REQUIRES(mu_);
  // Journals each alertAt level a tenant's spend reached for the first time this period.
  void JournalBudgetAlerts() REQUIRES(mu_);
  // Journals each policy whose hooks failed on more than its errorBudget of calls in the
  // pass that just ran (policy-degraded). Needs mu_.
  void JournalPolicyHealth() REQUIRES(mu_);
  // The workload `ref` names, as `caller` may see it. Needs mu_.
  Result<store::WorkloadRecord> Owned(const WorkloadRef& ref, const std::string& caller) REQUIRES(mu_);
  // The /metrics text now. Needs mu_.
  std::string RenderMetricsLocked() REQUIRES(mu_);
  // Tenants as /metrics, the API and the history see them. Needs mu_.
  Result<std::vector<TenantView>> TenantViewsLocked() REQUIRES(mu_);
  // The unscoped views (read_views.h). Need mu_. The queue carries the wait histograms
  // of `histograms_of` ("" : everyone's) and the waiting work of `items_of` ("": every
  // tenant's).
  nlohmann::json ClustersLocked() REQUIRES(mu_);
  Result<nlohmann::json> TenantsViewLocked() REQUIRES(mu_);
  // Null when more than `max_items` would be listed.
  Result<nlohmann::json> QueueViewLocked(const std::vector<std::string>& histograms_of,
                                         const std::string& items_of = "", size_t max_items = SIZE_MAX) REQUIRES(mu_);
  nlohmann::json AuditStatusLocked() REQUIRES(mu_);
  // Publishes what the API reads without mu_: the active revision's API limits (ApiLimitOf)
  // and the revision itself (Submit). Call after every activation.
  void PublishApiLimits() REQUIRES(mu_);

  // Lock order: pass_mu_, then mu_. pass_mu_ serialises what drives connectors (Pass,
  // Reload, Stop); mu_ guards the state the API reads and writes.
  Mutex pass_mu_ ACQUIRED_BEFORE(mu_);
  Mutex mu_;
  ControllerOptions options_;
  const connectors::ConnectorRegistry& registry_;
  const gpufed::Clock* clock_;
  const Logger* logger_;  // the App's; null: standard error
  policy::PolicyActivator* activator_;  // the App's
  store::Store* store_;                 // the App's
  audit::AuditTrail* audit_;            // the App's; null when read-only
  audit::AuditJournal* journal_;        // audit_'s journal; null when read-only
  const StoreWritesInJournal store_writes_in_journal_;  // LoopParts'
  std::unique_ptr<DecisionLog> discard_log_;  // a read-only loop's: decides nothing durable
  std::unique_ptr<JournalDecisionLog> journal_log_;
  PassMetrics pass_metrics_;
  std::unique_ptr<MetricsDecisionLog> metrics_log_;  // feeds pass_metrics_; teed last
  std::unique_ptr<TeeDecisionLog> tee_;
  SubmittedSpecs submitted_specs_;  // API -> loop (before reconciler_, which points at it)
  std::unique_ptr<Reconciler> reconciler_;
  std::vector<double> pass_seconds_ GUARDED_BY(mu_);  // pass time samples for pass_stats (bounded)
  int64_t passes_ GUARDED_BY(mu_) = 0;
  OfferedGpuTime offered_ GUARDED_BY(mu_);
  bool stopped_ GUARDED_BY(mu_) = false;
  audit::LiveShipping* shipping_ = nullptr;
  // ready()'s part that needs mu_, as of the last pass (or AttachShipping): a cluster was
  // observed and no AuditSink lags. Published so /readyz does not wait for a pass.
  std::atomic<bool> observed_and_shipping_{false};
  void PublishReadinessLocked() REQUIRES(mu_);
  std::function<std::string()> more_metrics_;  // AttachMetrics'; empty: none
  audit::LiveWitnessing* witnessing_ = nullptr;
  std::unique_ptr<BudgetWatch> budget_ PT_GUARDED_BY(mu_);
  std::unique_ptr<History> history_ PT_GUARDED_BY(mu_);  // the dashboard's samples, persisted in the store
  // The last /metrics text, served while a pass holds mu_; metrics_wanted_: a scrape got
  // it meanwhile, so the pass renders a fresh one as it ends.
  Mutex metrics_cache_mu_;  // innermost
  std::string metrics_cache_ GUARDED_BY(metrics_cache_mu_);
  std::atomic<bool> metrics_wanted_{false};
  PolicyHealth policy_health_ GUARDED_BY(mu_);
  std::vector<std::string> notices_ GUARDED_BY(mu_);
  // What the API reads without mu_ (which a pass holds throughout): the tenants' rate
  // limits and the active revision, published by PublishApiLimits after every activation.
  Mutex limits_mu_;  // innermost (nothing is locked under it)
  std::map<std::string, ApiLimit> api_limits_ GUARDED_BY(limits_mu_);
  std::shared_ptr<const policy::Revision> api_revision_ GUARDED_BY(limits_mu_);
};

}  // namespace gpufed::reconcile
