#pragma once
// The level-triggered reconcile loop. Each Pass re-reads everything (store, observed
// clusters, active revision), so a crash between any two steps is repaired by the
// next pass:
//   1. observe every cluster (each pass: a cluster that answers again is seen at once;
//      unhealthy after its spec.health.unhealthyAfter of failures);
//   2. sync each placed/running workload with what its cluster reports: running,
//      finished (attempt booked once), preempted or lost -> requeued as attempt + 1 from
//      its last checkpoint; re-apply submit intents that never reached the cluster;
//      carry out cancellations. Work on a cluster that does not answer stays its own
//      until lostAfter; then it is detached (detached_attempts.h) and requeued, and
//      cancelled and metered once the cluster answers again (reconciler_outage.cc);
//   3. build the placer's full snapshot (snapshot_builder.h: observed nodes, running work
//      with its bindings, pending work, spend, decayed fair-share usage) and plan every
//      waiting workload with placement::MakePlan; record each decision in the
//      DecisionLog (durable) before acting; stop the running work a placement preempts
//      (journalled, checkpointed where the connector can, requeued as its next
//      attempt); record the action intent in the store, apply it through the connector
//      (idempotent by uid + attempt), update status.
// Not thread-safe: callers serialise Pass and the accessors (the Controller does).
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "connectors/core/connector.h"
#include "controller/placement/fair_share.h"
#include "controller/reconcile/connector_set.h"
#include "controller/reconcile/decision_log.h"
#include "controller/reconcile/detached_attempts.h"
#include "controller/reconcile/pod_mix_tracker.h"
#include "controller/reconcile/snapshot_builder.h"
#include "controller/reconcile/submitted_specs.h"
#include "controller/reconcile/work_queue.h"
#include "controller/store/store.h"
#include "policies/engine/activation.h"

namespace gpufed::reconcile {

struct ReconcilerOptions {
  int max_attempts = 3;          // restarts of work that cannot resume from a checkpoint
  Duration fair_share_half_life = placement::kDefaultFairShareHalfLife;
  // The lease epoch of this leader's term (replicas on one database); 0 alone. Every
  // action this loop applies carries it (connectors::Action::leader_epoch).
  int64_t leader_epoch = 0;
};

struct ClusterStatus {
  bool healthy = false;
  bool observed = false;         // at least one successful observe
  Duration failing_since;        // when the current run of failures began
  int consecutive_errors = 0;
  int64_t total_errors = 0;
  std::string last_error;
  int detached_attempts = 0;     // given up here (lostAfter), not yet confirmed ended
  model::ClusterHealth health;   // its spec.health under the active revision, as of the last pass
  connectors::Observation last;  // last successful observation
  ObservedWorkloads workloads;   // last's workloads by key
};

// What one observe phase got from each cluster it asked.
using Observations = std::vector<std::pair<std::string, Result<connectors::Observation>>>;

struct PassStats {
  int observed_clusters = 0;
  int decisions = 0;
  int placed = 0;
  int queued = 0;
  int rejected = 0;
  int preempted = 0;
  int detached = 0;  // attempts given up on a cluster silent for its lostAfter
  int requeued = 0;
  int finished = 0;
  int actions_applied = 0;
  int action_errors = 0;
  size_t specs_cached = 0;  // parsed API specs kept after the pass (bounded by the unfinished work)
  // Removed clusters whose last attempt ended in this pass: their connectors are gone.
  std::vector<ConnectorSet::Change> retired;
};

class Reconciler {
 public:
  // All pointers must outlive the Reconciler.
  Reconciler(store::Store* store, DecisionLog* log, const gpufed::Clock* clock, ReconcilerOptions options = {});

  // The active revision (owned by the caller's PolicyActivator; may change between
  // passes).
  void SetRevision(const policy::Revision* revision) {
    if (revision != revision_) plan_memo_.Clear();  // the memo points into the old revision
    revision_ = revision;
  }
  // The connectors (owned here) follow the revision in two steps (connector_set.h):
  // PrepareConnectors makes what `revision` adds or changes without touching the set;
  // CommitConnectors swaps them in once that revision is active. A new cluster starts
  // unobserved (nothing is placed there before a pass observes it); a replaced one keeps
  // its last observation and is asked again at once.
  Result<ConnectorSet::Prepared> PrepareConnectors(const policy::Revision& revision,
                                                   const ConnectorSet::Maker& make) const {
    return connectors_.Prepare(revision.config.clusters, make);
  }
  std::vector<ConnectorSet::Change> CommitConnectors(ConnectorSet::Prepared prepared);
  // Active attempts per cluster that `revision` no longer declares (the removal's cost).
  std::map<std::string, int> ActiveOnRemoved(const policy::Revision& revision);
  // Specs of the workloads a source other than the repository and the API submits (the
  // source is their desired state), by workload name.
  void AddSpecs(const std::string& source, std::vector<model::Workload> specs);

  // Called with the result of every connector action the loop applies (audit).
  // Results of a pass's placements come together (one journal batch), any other alone.
  using ActionObserver = std::function<void(const std::vector<ActionResult>&)>;
  void SetActionObserver(ActionObserver observer) { on_action_ = std::move(observer); }
  // Specs the API parsed (submitted_specs.h; may be null), which SpecOf takes instead of
  // parsing a submission's text again. Must outlive this.
  void SetSubmittedSpecs(SubmittedSpecs* specs) { submitted_specs_ = specs; }
  // While false, the pass plans and preempts nothing, so no connector acts on a new
  // decision (the audit journal cannot record them). Active work is still synced.
  void SetPlacing(bool placing) { placing_ = placing; }

  // The plan the next pass would make for the work the store holds now, without acting
  // or writing anything: observes every cluster (no side effects) and plans on the
  // snapshot. It does not sync first (that writes): run it on a stopped controller's
  // state, or accept that capacity freed since the last pass counts once a pass saw it.
  Result<placement::Plan> Preview();

  // Inserts the active revision's Workloads the store does not know yet.
  Status SyncRepositoryWorkloads();
  // The observe phase's connector calls (every cluster whose backoff is due), kept apart
  // so the controller makes them without the lock its API needs: a cluster that hangs
  // until its timeout then delays only the pass. Changes no reconciler state; nothing
  // else may run on this reconciler meanwhile except reads of clusters().
  Observations Collect() const;
  // One pass on observations Collect made: record them, sync, plan, act.
  Result<PassStats> Pass(Observations observed);
  Result<PassStats> Pass() { return Pass(Collect()); }

  const std::map<std::string, ClusterStatus>& clusters() const { return clusters_; }
  // Fair share survives restarts: the decayed usage is kept in the store (meta
  // `fair_share`) at most kFairShareSaveEvery apart while passes run, and on Stop.
  // Restore reads it back (nothing stored: a fresh ledger); Save with `force` writes now.
  static constexpr Duration kFairShareSaveEvery = Duration::FromSeconds(300);
  Status RestoreFairShare();
  Status SaveFairShare(bool force);
  double DecayedGpuHours(const std::string& tenant) const { return fair_share_.DecayedGpuHours(tenant); }
  // The spec of a stored workload under the active revision; null when it has none
  // (a repo workload removed, or an API submission invalid under the new revision).
  const model::Workload* SpecOf(const store::WorkloadRecord& record, std::string* why = nullptr);
  // Earliest time something changes without an external event (a cluster's next
  // event, a backoff expiring); zero when unknown.
  Duration NextEvent() const;
  // Attempts given up on clusters that have not confirmed their end yet (metrics).
  const std::map<std::string, DetachedAttempt>& detached() const { return detached_.entries(); }
  // Connector errors by cluster since start (metrics).
  int64_t connector_errors(const std::string& cluster) const;
  // Placements a cluster refused, by cluster and reason ("capacity": the cluster said
  // the GPUs were busy; "invalid": it could never run the action). With a snapshot that
  // holds exactly what runs, each one is an anomaly (metrics, journal).
  const std::map<std::pair<std::string, std::string>, int64_t>& refusals() const { return refusals_; }
  // The placer's time for each decision of the last pass's plan, in seconds (metrics).
  const std::vector<double>& decision_seconds() const { return decision_seconds_; }

 private:
  void ApplyObservations(Observations observed, PassStats& stats);
  Status SyncActive(store::WorkloadRecord& r, PassStats& stats);
  // reconciler_outage.cc: an active attempt whose cluster is failing (kept until its
  // lostAfter, then detached), and the detached attempts of clusters that answer again.
  Status SyncUnanswered(store::WorkloadRecord& r, const ClusterStatus& cluster, PassStats& stats);
  Status SettleDetached(std::vector<store::WorkloadRecord>& records, PassStats& stats);
  // `live`: the workload's unfinished record in this pass, or null (then read from the store).
  Status BookDetached(const DetachedAttempt& d, const connectors::ObservedWorkload* seen, store::WorkloadRecord* live);
  model::ClusterHealth HealthOf(const std::string& cluster) const;
  // Stores a workload's new state: at once, or while a pass syncs its active work, in
  // that step's batch (FlushSyncUpdates), committed kSyncSlice updates at a time.
  Status UpdateRecord(const store::WorkloadRecord& r, const std::string& reason, Duration at);
  Status FlushSyncUpdates();
  Status Requeue(store::WorkloadRecord& r, const std::string& why, bool counts_as_failure, PassStats& stats);
  Status StopVictim(const placement::Preemption& p, const placement::Decision& beneficiary,
                    store::WorkloadRecord& victim, PassStats& stats);
  // What a pass's decisions write and do, gathered so that they become durable together:
  // the journal takes every decision in one batch (one fdatasync), then the store every
  // intent and state in one commit, then the connectors act. Not one of each per decision.
  struct PassWrites {
    std::vector<LoggedDecision> decisions;
    std::vector<std::pair<std::string, std::string>> signatures;  // uid -> Signature, once journalled
    std::vector<store::ActionRow> intents;
    std::vector<store::Store::WorkloadUpdate> updates;
    std::vector<std::pair<store::WorkloadRecord*, connectors::Action>> placements;  // applied in order
  };
  static constexpr size_t kMaxDecisionsPerWrite = 128;
  // Adds a placement: its decision, submit intent and Placed state (`r` becomes Placed).
  Status AddPlacement(const placement::Decision& d, store::WorkloadRecord& r, PassWrites& writes);
  // Journals, commits and applies what `writes` holds, then empties it. JournalWrites
  // journals the decisions alone (a preemption's intent waits for its victims);
  // JournalAndCommitWrites the decisions with their intents and updates.
  Status JournalWrites(PassWrites& writes);
  Status JournalAndCommitWrites(PassWrites& writes);
  Status CommitWrites(PassWrites& writes);
  // The decisions' records, then the store's rows that follow from them: each decision's
  // row (DecisionRowOf), `intents` and `updates`. One commit where the log carries store
  // writes (the journal in PostgreSQL, issue 38); else the journal's commit, then the
  // store's (the decision rows wait for it when there is nothing else to commit).
  // `signatures` (PassWrites'), when given, are remembered in last_decision_ as soon as
  // the journal holds the decisions, whatever the store's commit after it does: a
  // decision the journal holds is not journalled again by the next pass. The workload's
  // row stores the same digest with its update, for the next leader's first pass.
  Status CommitDecisions(const std::vector<LoggedDecision>& decisions, const std::vector<store::ActionRow>& intents,
                         const std::vector<store::Store::WorkloadUpdate>& updates,
                         std::vector<std::pair<std::string, std::string>>* signatures = nullptr);
  void ApplyPlacements(PassWrites& writes, PassStats& stats);
  Status FlushWrites(PassWrites& writes, PassStats& stats);
  // A placement that preempts: its victims are stopped after its decision is journalled
  // and before its intent commits (the writes gathered before it are flushed first).
  Status PlaceWithPreemption(const placement::Decision& d, store::WorkloadRecord& r, PassSnapshot& pass,
                             PassWrites& writes, PassStats& stats);
  // Journals and books a finished attempt's metering and adds its cost to `r.cost`.
  Status BookAttempt(store::WorkloadRecord& r, const connectors::ObservedWorkload* seen, const std::string& outcome);
  // The journal then the store: what BookAttempt does once it has the row.
  Status BookAttemptRow(store::AttemptRow a, const connectors::ObservedWorkload* seen);
  // Applies `action` to the attempt of the workload `uid` on `cluster`; the journal's record
  // of its result names the uid (ActionResult).
  Status ApplyAction(const connectors::Action& action, const std::string& uid, const std::string& cluster,
                     PassStats& stats);
  Status PlanWaiting(std::vector<store::WorkloadRecord>& records, PassStats& stats);
  // A crash between recording a submit intent and marking the workload Placed (two
  // commits before RecordIntentAndUpdate) leaves a waiting workload whose current key
  // may already run somewhere: each of `unsettled` (waiting) whose submit intent stands
  // adopts that placement instead of being planned again (which could start the key
  // twice). Only the first pass of a process (or of a leader's term) can meet one; it
  // asks for every waiting workload's intent at once.
  Status AdoptUnfinishedPlacements(const std::vector<store::WorkloadRecord*>& unsettled, Duration now);
  Result<connectors::Action> BuildSubmit(const store::WorkloadRecord& r, const model::Workload& w,
                                         const placement::Decision& d);
  SnapshotSources Sources(std::vector<store::WorkloadRecord>& records);
  const connectors::ObservedWorkload* Seen(const std::string& cluster, const std::string& key) const;
  connectors::CallContext Context(const std::string& cluster) const;

  store::Store* store_;
  DecisionLog* log_;
  std::vector<double> decision_seconds_;
  const gpufed::Clock* clock_;
  ReconcilerOptions options_;
  const policy::Revision* revision_ = nullptr;
  // What each pass's plan found that the next pass can keep (placement/plan_memo.h):
  // cluster states nothing changed, policy verdicts, fits. Cleared with the revision.
  placement::PlanMemo plan_memo_;
  // The pod mix each pass plans with: refreshed only when the work drifts, so the memo's
  // fits hold from one pass to the next.
  PodMixTracker pod_mix_;
  BindingCache bindings_;  // running work's parsed bindings, between passes
  ConnectorSet connectors_;
  std::map<std::string, ClusterStatus> clusters_;
  std::map<std::string, std::map<std::string, model::Workload>> source_specs_;  // source -> QualifiedName -> spec
  // Parsed specs by uid, for the revision they were read under. Once it holds twice as
  // many as there are unfinished workloads (plus 64), a pass drops those of finished ones
  // (DropFinishedSpecs), so memory follows the live work, not history.
  struct CachedSpec {
    std::string revision;
    model::Workload spec;
  };
  std::unordered_map<std::string, CachedSpec> api_specs_;  // node-based: a spec's address holds while cached
  void DropFinishedSpecs(const std::vector<store::WorkloadRecord>& unfinished);
  std::map<std::string, std::string> last_decision_;  // uid -> the digest of its last journalled Signature
  std::map<std::pair<std::string, std::string>, int64_t> refusals_;           // (cluster, reason) -> count
  placement::FairShareLedger fair_share_;
  Duration fair_share_saved_;  // when SaveFairShare last wrote
  placement::Plan last_plan_;
  WorkQueue queue_;
  DetachedAttempts detached_;
  std::map<std::string, Duration> detached_cancel_sent_;  // key -> when a cancel last went out
  ActionObserver on_action_;
  std::vector<ActionResult>* collecting_ = nullptr;  // ApplyPlacements: results wait here
  SubmittedSpecs* submitted_specs_ = nullptr;
  // The state changes a pass observes (jobs that started, finished, were lost), in one
  // commit per slice rather than one fsync each (and the ended attempts' charges in one
  // journal batch): 24,000 jobs that start between two passes were 24,000 commits. A
  // slice bounds the transaction (and the store's search for a row written earlier in it).
  static constexpr size_t kSyncSlice = 256;
  bool batching_sync_ = false;
  std::vector<store::Store::WorkloadUpdate> sync_updates_;
  std::vector<store::AttemptRow> sync_metered_;  // attempts the slice ends (BookAttempt)
  bool placing_ = true;
  // Whether a pass has looked for placements a crash left half made (PlanWaiting). Only
  // a previous process can leave one: here the intent and the Placed state commit together.
  bool recovered_placements_ = false;
  // The unfinished records a pass works on, kept between passes only so that copying them
  // in reuses their strings' storage (nothing points into them once a pass has ended).
  std::vector<store::WorkloadRecord> pass_records_;
};

}  // namespace gpufed::reconcile
