#include "controller/reconcile/reconciler.h"

#include <string_view>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "connectors/core/action_json.h"
#include "controller/common/utf8.h"
#include "controller/common/vocabulary.h"
#include "controller/config/loader.h"
#include "controller/config/repository.h"
#include "controller/reconcile/request_journal.h"

namespace gpufed::reconcile {

using store::WorkloadRecord;
using store::WorkloadState;

namespace {

// The binding a submit action carries out (a crash lost the decision's own copy).
placement::Binding BindingOfSubmit(const connectors::Action& a, const std::string& cluster) {
  placement::Binding b;
  b.cluster = cluster;
  b.pool = a.provision_pool;
  for (const connectors::NodeAssignment& m : a.nodes) {
    b.nodes.push_back(m.node.empty() ? m.new_node_name : m.node);
    b.gpus.push_back(m.gpus);
  }
  b.gpu_milli_each = a.gpu_milli_each;
  b.mig_profile = a.mig_profile;
  b.provisions_node = !a.provision_pool.empty();
  return b;
}

}  // namespace

Reconciler::Reconciler(store::Store* store, DecisionLog* log, const gpufed::Clock* clock, ReconcilerOptions options)
    : store_(store), log_(log), clock_(clock), options_(options), fair_share_(options.fair_share_half_life) {}

std::vector<ConnectorSet::Change> Reconciler::CommitConnectors(ConnectorSet::Prepared prepared) {
  std::vector<ConnectorSet::Change> changes = connectors_.Commit(std::move(prepared));
  for (const ConnectorSet::Change& c : changes) {
    if (c.kind == ConnectorSet::ChangeKind::kAdded) clusters_[c.cluster] = ClusterStatus{};
    // The new connector is asked at the next pass, whatever backoff the old one earned.
    if (c.kind == ConnectorSet::ChangeKind::kReplaced) queue_.Forget("cluster/" + c.cluster);
  }
  return changes;
}

std::map<std::string, int> Reconciler::ActiveOnRemoved(const policy::Revision& revision) {
  std::map<std::string, int> out;
  Result<std::vector<WorkloadRecord>> records = store_->ListUnfinished();
  if (!records.ok()) return out;
  for (const WorkloadRecord& r : *records) {
    if (store::IsActive(r.state) && !r.cluster.empty() && revision.config.FindCluster(r.cluster) == nullptr)
      ++out[r.cluster];
  }
  return out;
}

void Reconciler::AddSpecs(const std::string& source, std::vector<model::Workload> specs) {
  for (model::Workload& w : specs) source_specs_[source][QualifiedName(w.tenant, w.metadata.name)] = std::move(w);
}

int64_t Reconciler::connector_errors(const std::string& cluster) const {
  auto it = clusters_.find(cluster);
  return it == clusters_.end() ? 0 : it->second.total_errors;
}

connectors::CallContext Reconciler::Context(const std::string& cluster) const {
  connectors::CallContext ctx;
  ctx.clock = clock_;
  // The declaration its connector was made from: a retiring cluster is no longer in the revision.
  if (const model::Cluster* c = connectors_.DeclarationOf(cluster)) ctx.timeout = c->connector.timeout;
  return ctx;
}

Status Reconciler::SyncRepositoryWorkloads() {
  if (!revision_) return FailedPrecondition("no active policy revision");
  for (const model::Workload& w : revision_->config.workloads) {
    Result<std::optional<WorkloadRecord>> existing = store_->Get(w.tenant, w.metadata.name);
    if (!existing.ok()) return existing.status();
    if (*existing) continue;
    WorkloadRecord r;
    r.name = w.metadata.name;
    r.tenant = w.tenant;
    r.source = "repo";
    // Without spec.submittedAt a repository workload is submitted when the loop first
    // sees it (on the wall clock, 0 would be 1970: a wait of decades).
    r.submitted = w.submitted_at.millis() > 0 ? w.submitted_at : clock_->Now();
    r.gpu_milli = int64_t{w.resources.total_gpus()} * 1000;
    // The journal names the repository as the principal, and the revision's commit.
    store::SubmissionFacts facts =
        SubmissionFactsOf(w, r.submitted, std::string(kRepositoryPrincipal), revision_->config.revision);
    // One uid scheme for every source (the API's too): `<name>-u<N>` from the store.
    Result<WorkloadRecord> stored = store_->SubmitNumbered(std::move(r), clock_->Now(), std::move(facts));
    if (!stored.ok()) return stored.status();
  }
  return Status::Ok();
}

const model::Workload* Reconciler::SpecOf(const WorkloadRecord& r, std::string* why) {
  if (!revision_) return nullptr;
  const std::string& revision = revision_->config.revision;
  auto cached = api_specs_.find(r.uid);
  if (cached != api_specs_.end() && cached->second.revision == revision) return &cached->second.spec;
  model::Workload spec;
  if (r.source == "repo") {
    const model::Workload* found = nullptr;
    for (const model::Workload& w : revision_->config.workloads) {
      if (w.metadata.name == r.name && w.tenant == r.tenant) found = &w;
    }
    if (!found) {
      if (why) *why = "removed from the policy repository";
      return nullptr;
    }
    spec = *found;
  } else if (auto source = source_specs_.find(r.source); source != source_specs_.end()) {
    auto it = source->second.find(QualifiedName(r.tenant, r.name));
    if (it == source->second.end()) {
      if (why) *why = r.source + " spec not loaded";
      return nullptr;
    }
    spec = it->second;
  } else if (std::optional<model::Workload> handed =
                 submitted_specs_ != nullptr ? submitted_specs_->Take(r.uid, revision) : std::nullopt) {
    spec = std::move(*handed);
  } else {
    config::LoadResult loaded = config::LoadText(r.spec_text, "api/" + r.name + ".yaml", &revision_->config);
    if (!loaded.ok() || loaded.config.workloads.size() != 1) {
      if (why) {
        *why = "invalid under revision " + config::ShortRevision(revision_->config.revision);
        for (const auto& d : loaded.diagnostics.items()) *why += "; " + d.ToString();
      }
      return nullptr;
    }
    spec = loaded.config.workloads[0];
  }
  spec.submitted_at = r.submitted;
  CachedSpec& entry = api_specs_[r.uid];
  entry = {revision, std::move(spec)};
  return &entry.spec;
}

Status Reconciler::AdoptUnfinishedPlacements(const std::vector<WorkloadRecord*>& unsettled, Duration now) {
  std::vector<std::string> keys;
  keys.reserve(unsettled.size());
  for (const WorkloadRecord* r : unsettled) keys.push_back(r->ActionKey());
  Result<std::map<std::string, store::ActionRow>> intents =
      store_->GetActions(ActionKindName(ActionKind::kSubmit), keys);
  if (!intents.ok()) return intents.status();
  for (WorkloadRecord* r : unsettled) {
    auto intent = intents->find(r->ActionKey());
    if (intent == intents->end() || intent->second.state == store::ActionState::kFailed) continue;
    r->state = WorkloadState::kPlaced;
    r->cluster = intent->second.cluster;
    r->decision_signature.clear();
    Result<connectors::Action> action =
        connectors::ActionFromJson(nlohmann::json::parse(intent->second.payload, nullptr, false));
    if (action.ok()) r->binding_json = placement::BindingToJson(BindingOfSubmit(*action, r->cluster)).dump();
    r->reason = "placed on " + r->cluster + " (recovered an unfinished placement)";
    GPUFED_RETURN_IF_ERROR(store_->Update(*r, r->reason, now));
  }
  return Status::Ok();
}

void Reconciler::DropFinishedSpecs(const std::vector<WorkloadRecord>& unfinished) {
  if (api_specs_.size() <= 2 * unfinished.size() + 64) return;
  std::unordered_set<std::string_view> live;
  live.reserve(unfinished.size());
  for (const WorkloadRecord& r : unfinished) live.insert(r.uid);
  std::erase_if(api_specs_, [&live](const auto& entry) { return !live.count(entry.first); });
}

const connectors::ObservedWorkload* Reconciler::Seen(const std::string& cluster, const std::string& key) const {
  auto it = clusters_.find(cluster);
  if (it == clusters_.end()) return nullptr;
  return it->second.workloads.Find(it->second.last, key);
}

Status Reconciler::BookAttempt(WorkloadRecord& r, const connectors::ObservedWorkload* seen,
                               const std::string& outcome) {
  store::AttemptRow a;
  a.uid = r.uid;
  a.workload = r.name;
  a.attempt = r.attempt;
  a.tenant = r.tenant;
  a.cluster = r.cluster;
  a.outcome = outcome;
  a.cloud = r.cloud;
  GPUFED_RETURN_IF_ERROR(BookAttemptRow(a, seen));
  // The workload's own total (what /metrics and the live view count) follows the same
  // booking, for every attempt that ends, preempted victims included; the caller stores it.
  // A workload's row keeps one currency: an attempt on a cluster that prices in another
  // stays out of this total (the attempt ledger, which chargeback reads, has it in its own).
  if (seen != nullptr) {
    if (Result<Money> total = r.cost.Plus(seen->cost); total.ok()) r.cost = *total;
  }
  return Status::Ok();
}

Status Reconciler::BookAttemptRow(store::AttemptRow a, const connectors::ObservedWorkload* seen) {
  if (seen) {
    a.gpu_seconds = seen->gpu_seconds;
    a.cost = seen->cost;
    a.started = seen->started_at;
    a.finished = seen->finished_at;
  }
  // Write-ahead, like decisions: the journal holds the charge before the store books it.
  // The booking commits with the Update that ends the attempt, which every caller makes
  // next (one commit, not two; store.h "Writes that wait"). While a pass syncs its active
  // work, both wait for the slice (FlushSyncUpdates).
  if (batching_sync_) {
    sync_metered_.push_back(a);
  } else {
    GPUFED_RETURN_IF_ERROR(log_->RecordMetered({a}, clock_->Now()));
    GPUFED_RETURN_IF_ERROR(store_->FinishAttemptLater(a));
  }
  return Status::Ok();
}

Status Reconciler::Requeue(WorkloadRecord& r, const std::string& why, bool counts_as_failure, PassStats& stats) {
  const model::Workload* spec = SpecOf(r);
  bool checkpointable = spec && spec->checkpoint.enabled;
  Duration now = clock_->Now();
  if (!checkpointable && counts_as_failure && r.attempt >= options_.max_attempts) {
    r.state = WorkloadState::kFailed;
    r.reason = why + "; gave up after " + std::to_string(r.attempt) + " attempts";
    r.finished = now;
    return UpdateRecord(r, r.reason, now);
  }
  r.state = WorkloadState::kRequeued;
  r.resume_from = checkpointable ? r.checkpoint : Duration();
  r.reason = why + (checkpointable ? "; resumes from checkpoint at " + r.resume_from.ToString()
                                   : "; restarts from the beginning");
  ++r.attempt;
  r.cluster.clear();
  r.binding_json = "{}";
  r.estimate = Money(0, r.estimate.currency());
  r.cloud = false;
  ++stats.requeued;
  return UpdateRecord(r, r.reason, now);
}

Status Reconciler::ApplyAction(const connectors::Action& action, const std::string& uid, const std::string& cluster,
                               PassStats& stats) {
  std::string kind = connectors::ActionKindName(action.kind);
  Duration now = clock_->Now();
  if (!queue_.Ready(action.workload, now)) return Unavailable("backing off");
  connectors::Connector* connector = connectors_.Find(cluster);
  if (connector == nullptr) return FailedPrecondition("no connector for cluster " + cluster);
  connectors::Action applied = action;
  applied.leader_epoch = options_.leader_epoch;
  Result<connectors::ApplyOutcome> out = connector->Apply(applied, Context(cluster));
  if (on_action_) {
    if (collecting_ != nullptr) {
      collecting_->push_back({action, uid, cluster, out.status()});
    } else {
      on_action_({{action, uid, cluster, out.status()}});
    }
  }
  if (out.ok()) {
    queue_.Forget(action.workload);
    ++stats.actions_applied;
    // The outcome may wait for the store's next commit: lost in a crash, the intent is
    // applied again with the same key, as after a crash just before this line.
    store_->MarkActionLater(kind, action.key, store::ActionState::kApplied, "");
    return Status::Ok();
  }
  ++stats.action_errors;
  ++clusters_[cluster].total_errors;
  StatusCode code = out.status().code();
  if (code == StatusCode::kUnavailable || code == StatusCode::kDeadlineExceeded) {
    queue_.Backoff(action.workload, now);
    return out.status();
  }
  if (action.kind == connectors::ActionKind::kSubmit) {
    // The cluster refused a placement made on its own last report: an anomaly.
    ++refusals_[{cluster, code == StatusCode::kFailedPrecondition ? "capacity" : "invalid"}];
  }
  store_->MarkActionLater(kind, action.key, store::ActionState::kFailed, out.status().message());
  return out.status();
}

Status Reconciler::UpdateRecord(const WorkloadRecord& r, const std::string& reason, Duration at) {
  if (!batching_sync_) return store_->Update(r, reason, at);
  sync_updates_.push_back({r, reason, at});
  return sync_updates_.size() >= kSyncSlice ? FlushSyncUpdates() : Status::Ok();
}

Status Reconciler::FlushSyncUpdates() {
  std::vector<store::AttemptRow> metered = std::move(sync_metered_);
  std::vector<store::Store::WorkloadUpdate> updates = std::move(sync_updates_);
  sync_metered_.clear();
  sync_updates_.clear();
  const Duration now = clock_->Now();
  // The charges in the journal (one sync), then booked and committed with the updates
  // that end their attempts.
  if (!metered.empty()) GPUFED_RETURN_IF_ERROR(log_->RecordMetered(metered, now));
  for (const store::AttemptRow& a : metered) GPUFED_RETURN_IF_ERROR(store_->FinishAttemptLater(a));
  return store_->RecordIntentsAndUpdates({}, updates, now);
}

Status Reconciler::SyncActive(WorkloadRecord& r, PassStats& stats) {
  Duration now = clock_->Now();
  auto cit = clusters_.find(r.cluster);
  if (connectors_.Find(r.cluster) == nullptr) {
    // Nobody can ask that cluster again: its last report is all there is.
    GPUFED_RETURN_IF_ERROR(BookAttempt(r, Seen(r.cluster, r.ActionKey()), "lost"));
    return Requeue(r, "cluster " + r.cluster + " left the federation", true, stats);
  }
  if (cit != clusters_.end() && cit->second.consecutive_errors > 0) return SyncUnanswered(r, cit->second, stats);
  if (cit == clusters_.end() || !cit->second.observed) return Status::Ok();
  const std::string key = r.ActionKey();
  const connectors::ObservedWorkload* seen = Seen(r.cluster, key);
  if (seen == nullptr) {
    Result<std::optional<store::ActionRow>> submit = store_->GetAction(ActionKindName(ActionKind::kSubmit), key);
    if (!submit.ok()) return submit.status();
    if (*submit && (*submit)->state == store::ActionState::kIntent) {
      // Recorded but maybe never applied (a crash, a timeout): apply again, same key.
      Result<connectors::Action> action = connectors::ActionFromJson(nlohmann::json::parse((*submit)->payload));
      if (action.ok()) (void)ApplyAction(*action, r.uid, r.cluster, stats);
      return Status::Ok();
    }
    if (r.cancel_requested) {
      r.state = WorkloadState::kCancelled;
      r.finished = now;
      return UpdateRecord(r, "cancelled before it started", now);
    }
    GPUFED_RETURN_IF_ERROR(BookAttempt(r, nullptr, "lost"));
    return Requeue(r, "cluster " + r.cluster + " no longer reports " + key, true, stats);
  }
  bool checkpointed = seen->checkpoint != r.checkpoint;
  r.progress = seen->progress;
  r.checkpoint = seen->checkpoint;
  switch (seen->state) {
    case connectors::RunState::kStarting:
    case connectors::RunState::kRunning: {
      if (r.cancel_requested) {
        connectors::Action cancel{connectors::ActionKind::kCancel, key, r.name, r.tenant, r.attempt};
        cancel.reason = "cancelled by request";
        GPUFED_RETURN_IF_ERROR(store_->RecordActionIntent({ActionKindName(ActionKind::kCancel), key, r.name, r.attempt,
                                                           r.cluster, store::ActionState::kIntent, "", now,
                                                           connectors::ActionToJson(cancel).dump()}));
        (void)ApplyAction(cancel, r.uid, r.cluster, stats);
        return Status::Ok();
      }
      if (seen->state == connectors::RunState::kRunning && r.state == WorkloadState::kPlaced) {
        r.state = WorkloadState::kRunning;
        if (r.started.millis() == 0) r.started = seen->started_at;
        r.reason = "running on " + r.cluster;
        return UpdateRecord(r, r.reason, seen->started_at);
      }
      // Checkpoints are durable so a requeue after a controller crash resumes from them.
      if (checkpointed) return UpdateRecord(r, r.reason, now);
      return Status::Ok();
    }
    case connectors::RunState::kSucceeded:
      GPUFED_RETURN_IF_ERROR(BookAttempt(r, seen, "succeeded"));
      r.state = WorkloadState::kSucceeded;
      r.reason = "completed on " + r.cluster;
      r.finished = seen->finished_at;
      ++stats.finished;
      return UpdateRecord(r, r.reason, seen->finished_at);
    case connectors::RunState::kFailed:
      GPUFED_RETURN_IF_ERROR(BookAttempt(r, seen, seen->lost ? "lost" : "failed"));
      if (seen->lost) return Requeue(r, "lost on " + r.cluster + ": " + seen->reason, true, stats);
      r.state = WorkloadState::kFailed;
      r.reason = seen->reason;
      r.finished = seen->finished_at;
      ++stats.finished;
      return UpdateRecord(r, r.reason, seen->finished_at);
    case connectors::RunState::kPreempted: {
      GPUFED_RETURN_IF_ERROR(BookAttempt(r, seen, "preempted"));
      r.state = WorkloadState::kPreempted;
      r.reason = seen->reason.empty() ? "preempted" : seen->reason;
      GPUFED_RETURN_IF_ERROR(UpdateRecord(r, r.reason, seen->finished_at));
      return Requeue(r, r.reason, false, stats);
    }
    case connectors::RunState::kCancelled:
      GPUFED_RETURN_IF_ERROR(BookAttempt(r, seen, "cancelled"));
      r.state = r.cancel_requested ? WorkloadState::kCancelled : WorkloadState::kFailed;
      r.reason = r.cancel_requested ? "cancelled by request" : "cancelled on the cluster: " + seen->reason;
      r.finished = seen->finished_at;
      ++stats.finished;
      return UpdateRecord(r, r.reason, seen->finished_at);
  }
  return Status::Ok();
}

Duration Reconciler::NextEvent() const {
  Duration now = clock_->Now();
  Duration best = queue_.NextDue(now);
  for (const auto& [name, cs] : clusters_) {
    Duration e = cs.last.next_event;
    if (e.millis() > 0 && e > now && (best.millis() == 0 || e < best)) best = e;
  }
  return best;
}

}  // namespace gpufed::reconcile
