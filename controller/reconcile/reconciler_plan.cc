// Reconciler: the pass, planning of waiting work, and applying placements.
#include <chrono>
#include <set>

#include <nlohmann/json.hpp>

#include "connectors/core/action_json.h"

#include "controller/common/sha256.h"
#include "controller/common/time_text.h"
#include "controller/common/vocabulary.h"
#include "controller/placement/inventory.h"
#include "controller/reconcile/budget_watch.h"
#include "controller/reconcile/reconciler.h"

namespace gpufed::reconcile {

using store::WorkloadRecord;
using store::WorkloadState;

namespace {

constexpr const char* kFairShareKey = "fair_share";

bool Retryable(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kDeadlineExceeded;
}

// What makes two queued decisions "the same" for the log: outcome and each cluster's
// verdict, not the reason text (which carries ever-changing wait times). Its digest is
// what the loop keeps and stores (records.h's decision_signature): at 1,000 clusters the
// text is tens of kilobytes a workload.
std::string Signature(const placement::Decision& d) {
  std::string sig = placement::OutcomeName(d.outcome);
  for (const placement::ClusterVerdict& v : d.verdicts) {
    sig += "|" + v.cluster + ":" + (v.eligible ? "e" : "-") + (v.fits_now ? "f" : "-") + v.rule;
  }
  return Sha256Hex(sig);
}

// Why a cluster offers nothing, as its verdicts say it: an outage names when it began and
// the last error; a cluster not yet answered says so.
std::string DownReason(const ClusterStatus& cs) {
  if (cs.healthy && cs.observed) return "";
  if (cs.consecutive_errors > 0) {
    return "cluster unhealthy since " + FormatControllerMillis(cs.failing_since.millis()) +
           ": last error: " + cs.last_error;
  }
  return cs.observed ? "cluster unhealthy" : "cluster not observed yet (its connector has not answered)";
}

}  // namespace

Result<PassStats> Reconciler::Pass(Observations observed) {
  PassStats stats;
  if (!revision_) return FailedPrecondition("no active policy revision");
  ApplyObservations(std::move(observed), stats);
  std::vector<WorkloadRecord>& records = pass_records_;
  GPUFED_RETURN_IF_ERROR(store_->ListUnfinishedInto(&records));
  // What the clusters report of the active work, committed in slices (UpdateRecord);
  // what was gathered before an error still commits.
  batching_sync_ = true;
  Status synced = Status::Ok();
  for (WorkloadRecord& r : records) {
    if (!store::IsActive(r.state)) continue;
    synced = SyncActive(r, stats);
    if (!synced.ok()) break;
  }
  batching_sync_ = false;
  Status flushed = FlushSyncUpdates();
  GPUFED_RETURN_IF_ERROR(synced);
  GPUFED_RETURN_IF_ERROR(flushed);
  GPUFED_RETURN_IF_ERROR(SettleDetached(records, stats));
  // A removed cluster keeps its connector until nothing runs there any more, attempts
  // given up on but not yet confirmed ended included (they are cancelled through it).
  std::set<std::string> busy;
  for (const WorkloadRecord& r : records) {
    if (store::IsActive(r.state)) busy.insert(r.cluster);
  }
  for (auto& [name, cs] : clusters_) cs.detached_attempts = 0;
  for (const auto& [key, d] : detached_.entries()) {
    busy.insert(d.cluster);
    ++clusters_[d.cluster].detached_attempts;
  }
  stats.retired = connectors_.RetireIdle(busy);
  for (const ConnectorSet::Change& c : stats.retired) clusters_.erase(c.cluster);
  // Fair share: what each tenant held since the last pass accrues, then the new holdings.
  const Duration now = clock_->Now();
  fair_share_.Advance(now);
  std::map<std::string, int64_t> held;
  for (const model::Tenant& t : revision_->config.tenants) held[t.metadata.name] = 0;
  for (const WorkloadRecord& r : records) {
    if (store::IsActive(r.state)) held[r.tenant] += r.gpu_milli;
  }
  for (const auto& [tenant, milli] : held) fair_share_.Hold(tenant, milli);
  GPUFED_RETURN_IF_ERROR(SaveFairShare(false));
  if (!placing_) {
    last_plan_ = {};
    return stats;
  }
  GPUFED_RETURN_IF_ERROR(PlanWaiting(records, stats));
  // After the pass: its snapshot and journal records point at the specs it read.
  DropFinishedSpecs(records);
  stats.specs_cached = api_specs_.size();
  return stats;
}

Status Reconciler::RestoreFairShare() {
  Result<std::optional<std::string>> saved = store_->GetMeta(kFairShareKey);
  if (!saved.ok()) return saved.status();
  if (!*saved) return Status::Ok();
  nlohmann::json j = nlohmann::json::parse(**saved, nullptr, false);
  if (!j.is_object() || !j.contains("last_ms") || !j["last_ms"].is_number_integer() || !j.contains("decayed_hours") ||
      !j["decayed_hours"].is_object()) {
    return Status(StatusCode::kDataLoss, std::string("store meta ") + kFairShareKey + ": not a fair-share ledger");
  }
  placement::FairShareState state;
  state.last = Duration::FromMillis(j["last_ms"].get<int64_t>());
  for (const auto& [tenant, hours] : j["decayed_hours"].items()) {
    if (!hours.is_number())
      return Status(StatusCode::kDataLoss, std::string("store meta ") + kFairShareKey + ": " + tenant);
    state.decayed_hours[tenant] = hours.get<double>();
  }
  fair_share_.Restore(state);
  fair_share_saved_ = state.last;
  return Status::Ok();
}

Status Reconciler::SaveFairShare(bool force) {
  const placement::FairShareState state = fair_share_.State();
  if (!force && state.last.millis() - fair_share_saved_.millis() < kFairShareSaveEvery.millis()) return Status::Ok();
  nlohmann::json hours = nlohmann::json::object();
  for (const auto& [tenant, h] : state.decayed_hours) hours[tenant] = h;
  const std::string ledger = nlohmann::json{{"last_ms", state.last.millis()}, {"decayed_hours", hours}}.dump();
  if (force) {
    GPUFED_RETURN_IF_ERROR(store_->SetMeta(kFairShareKey, ledger));
  } else {
    // Commits with the pass's next store write: a crash resumes from the ledger before.
    store_->SetMetaLater(kFairShareKey, ledger);
  }
  fair_share_saved_ = state.last;
  return Status::Ok();
}

Result<placement::Plan> Reconciler::Preview() {
  if (!revision_) return FailedPrecondition("no active policy revision");
  PassStats stats;
  ApplyObservations(Collect(), stats);
  Result<std::vector<WorkloadRecord>> records = store_->ListUnfinished();
  if (!records.ok()) return records.status();
  PassSnapshot pass = BuildSnapshot(Sources(*records));
  // The mix the loop plans with, so the preview is the plan a pass would make (a loop
  // that has not planned yet would publish the snapshot's own mix, the placer's default).
  pass.snapshot.pod_mix = pod_mix_.published();
  return placement::MakePlan(pass.snapshot);
}

SnapshotSources Reconciler::Sources(std::vector<WorkloadRecord>& records) {
  SnapshotSources src;
  src.revision = revision_;
  src.now = clock_->Now();
  for (const auto& [name, cs] : clusters_) {
    src.clusters[name] = {cs.healthy, cs.observed, cs.observed ? &cs.last : nullptr,
                          cs.observed ? &cs.workloads : nullptr, DownReason(cs)};
  }
  // A declared cluster without a connector (none could be made for it) takes nothing:
  // planned from its declared pools, work would be bound where nobody can run it.
  for (const model::Cluster& c : revision_->config.clusters) {
    if (clusters_.count(c.metadata.name) == 0) {
      src.clusters[c.metadata.name] = {false, false, nullptr, nullptr, "no connector for this cluster"};
    }
  }
  for (WorkloadRecord& r : records) src.records.push_back(&r);
  src.spec_of = [this](const WorkloadRecord& r) { return SpecOf(r); };
  Result<std::vector<placement::MeteredSpend>> metered = MeteredThisPeriod(*store_, src.now);
  if (metered.ok()) src.metered = std::move(*metered);
  src.fair_share = &fair_share_;
  src.bindings = &bindings_;
  return src;
}

Result<connectors::Action> Reconciler::BuildSubmit(const WorkloadRecord& r, const model::Workload& w,
                                                   const placement::Decision& d) {
  connectors::Action a;
  a.kind = connectors::ActionKind::kSubmit;
  a.key = r.ActionKey();
  a.workload = r.name;
  a.tenant = r.tenant;
  a.attempt = r.attempt;
  a.source = r.source;
  const model::Cluster* cluster = revision_->config.FindCluster(d.binding.cluster);
  if (cluster == nullptr) return Internal("no cluster " + d.binding.cluster + " in the revision");
  const model::NodePool* pool = nullptr;
  for (const model::NodePool& p : cluster->node_pools) {
    if (p.name == d.binding.pool) pool = &p;
  }
  if (pool == nullptr) return Internal("no node pool " + d.binding.pool + " on " + d.binding.cluster);
  // Nodes the cluster does not report yet are the ones this placement provisions.
  std::set<std::string> present;
  for (const connectors::ObservedNode& n : clusters_[d.binding.cluster].last.nodes) present.insert(n.name);
  for (size_t m = 0; m < d.binding.nodes.size(); ++m) {
    connectors::NodeAssignment member;
    member.gpus = m < d.binding.gpus.size() ? d.binding.gpus[m] : std::vector<int>{};
    if (present.count(d.binding.nodes[m])) {
      member.node = d.binding.nodes[m];
    } else {
      member.new_node_name = d.binding.nodes[m];
      a.provision_pool = pool->name;
    }
    a.nodes.push_back(std::move(member));
  }
  a.gpu_milli_each = d.binding.gpu_milli_each;
  a.mig_profile = d.binding.mig_profile;
  a.cpu_milli = w.resources.cpu.milli();
  a.memory_bytes = w.resources.memory.milli() / 1000;
  a.start_delay = d.binding.ready_after;
  a.duration = w.duration_hint;
  a.resume_from = r.resume_from;
  a.checkpoint_interval = w.checkpoint.enabled ? w.checkpoint.interval : Duration();
  a.run = w.run;
  a.priority_class = w.priority_class;
  a.policy_revision = revision_->config.revision;
  // GPU memory taken on each GPU of the pool.
  if (a.gpu_milli_each >= 1000 && a.mig_profile.empty()) {
    a.gpu_memory_each = pool->gpu.memory.milli() / 1000;
  } else if (placement::PoolShapeFits(*pool, w.resources)) {
    a.gpu_memory_each = placement::DemandOn(*pool, w.resources).memory_each;
  }
  return a;
}

Status Reconciler::StopVictim(const placement::Preemption& p, const placement::Decision& beneficiary,
                              WorkloadRecord& victim, PassStats& stats) {
  const Duration now = clock_->Now();
  placement::Decision pd;
  pd.workload = victim.name;
  pd.tenant = victim.tenant;
  pd.priority = p.priority;
  pd.outcome = placement::Outcome::kQueued;
  pd.binding = placement::BindingFromJson(nlohmann::json::parse(victim.binding_json, nullptr, false));
  pd.binding.cluster = victim.cluster;
  pd.reason = p.reason + " on " + p.cluster + (p.checkpointable ? "; resumes from its last checkpoint" : "; restarts");
  DecisionContext ctx{revision_->config.revision, now, victim.attempt, placement::DecisionKind::kPreempt, victim.uid};
  ctx.beneficiary = beneficiary.workload;
  ctx.beneficiary_tenant = beneficiary.tenant;
  ctx.cluster = revision_->config.FindCluster(victim.cluster);  // null once the revision dropped it
  connectors::Action a{connectors::ActionKind::kPreempt, victim.ActionKey(), victim.name, victim.tenant,
                       victim.attempt};
  a.reason = pd.reason;
  // The victim's decision, then (or with it) its preempt intent.
  GPUFED_RETURN_IF_ERROR(CommitDecisions({LoggedDecision{&pd, ctx}},
                                         {{ActionKindName(a.kind), a.key, a.workload, a.attempt, victim.cluster,
                                           store::ActionState::kIntent, "", now, connectors::ActionToJson(a).dump()}},
                                         {}));
  // The connector checkpoints the work where it can and stops it. Its capacity is the
  // beneficiary's from now on: the victim becomes its next attempt at once, so no later
  // snapshot lists both. What the cluster has not released yet it reports as in use,
  // and the placer does not count on it.
  (void)ApplyAction(a, victim.uid, victim.cluster, stats);
  GPUFED_RETURN_IF_ERROR(BookAttempt(victim, Seen(victim.cluster, victim.ActionKey()), "preempted"));
  victim.state = WorkloadState::kPreempted;
  victim.reason = pd.reason;
  GPUFED_RETURN_IF_ERROR(store_->Update(victim, victim.reason, now));
  ++stats.preempted;
  return Requeue(victim, victim.reason, false, stats);
}

Status Reconciler::PlanWaiting(std::vector<WorkloadRecord>& records, PassStats& stats) {
  Duration now = clock_->Now();
  bool any_pending = false;
  std::vector<WorkloadRecord*> unsettled;  // waiting, and maybe placed before a crash
  for (WorkloadRecord& r : records) {
    if (!store::IsWaiting(r.state)) continue;
    std::string why;
    const model::Workload* spec = r.cancel_requested ? nullptr : SpecOf(r, &why);
    if (spec == nullptr) {
      r.state = r.cancel_requested || r.source == "repo" ? WorkloadState::kCancelled : WorkloadState::kRejected;
      r.reason = r.cancel_requested ? "cancelled by request" : why;
      r.finished = now;
      GPUFED_RETURN_IF_ERROR(store_->Update(r, r.reason, now));
      continue;
    }
    any_pending = true;
    if (!recovered_placements_) unsettled.push_back(&r);
  }
  if (!unsettled.empty()) GPUFED_RETURN_IF_ERROR(AdoptUnfinishedPlacements(unsettled, now));
  recovered_placements_ = true;
  last_plan_ = {};
  decision_seconds_.clear();
  if (!any_pending) return Status::Ok();
  PassSnapshot pass = BuildSnapshot(Sources(records));
  if (pass.snapshot.pending.empty()) return Status::Ok();
  std::vector<const model::ResourceRequest*> work;
  work.reserve(pass.snapshot.pending.size() + pass.snapshot.running.size());
  for (const model::Workload* w : pass.snapshot.pending) work.push_back(&w->resources);
  for (const placement::RunningWorkload& r : pass.snapshot.running) {
    if (r.workload != nullptr) work.push_back(&r.workload->resources);
  }
  pass.snapshot.pod_mix = pod_mix_.Update(work);
  // The placer reads no clock; the loop times each decision from the one before it (the
  // first from the plan's start), so the samples add up to the plan's time.
  auto since = std::chrono::steady_clock::now();
  pass.snapshot.on_decision = [this, &since](const placement::Decision&) {
    const auto now = std::chrono::steady_clock::now();
    decision_seconds_.push_back(std::chrono::duration<double>(now - since).count());
    since = now;
  };
  pass.snapshot.memo = &plan_memo_;
  last_plan_ = placement::MakePlan(pass.snapshot);
  pass.snapshot.on_decision = nullptr;
  pass.snapshot.memo = nullptr;
  GPUFED_RETURN_IF_ERROR(log_->BeginPass(last_plan_, pass.snapshot));
  // The log may keep pointers to the plan and snapshot until the pass ends, however it ends.
  struct PassEnd {
    DecisionLog* log;
    ~PassEnd() { log->EndPass(); }
  } pass_end{log_};
  PassWrites writes;
  for (const placement::Decision& d : last_plan_.decisions) {
    // Bounded: a journal record holds every cluster's verdict (about 100 KB at 1,000
    // clusters), so a pass of thousands of decisions is made durable in slices.
    if (writes.decisions.size() >= kMaxDecisionsPerWrite) GPUFED_RETURN_IF_ERROR(FlushWrites(writes, stats));
    auto it = pass.pending.find(QualifiedName(d.tenant, d.workload));
    if (it == pass.pending.end()) continue;
    WorkloadRecord& r = *it->second;
    ++stats.decisions;
    if (d.outcome == placement::Outcome::kPlaced) {
      if (d.preempted.empty()) {
        GPUFED_RETURN_IF_ERROR(AddPlacement(d, r, writes));
      } else {
        GPUFED_RETURN_IF_ERROR(PlaceWithPreemption(d, r, pass, writes, stats));
      }
      continue;
    }
    DecisionContext ctx{revision_->config.revision, now, r.attempt, placement::DecisionKind::kPlace, r.uid};
    // The same decision as the last one journalled is not journalled again: as this term
    // remembers it, else as the workload's row does (a new leader's first pass).
    std::string sig = Signature(d);
    auto known = last_decision_.find(r.uid);
    bool changed = (known != last_decision_.end() ? known->second : r.decision_signature) != sig;
    if (changed) {
      writes.decisions.push_back({&d, ctx});
      writes.signatures.emplace_back(r.uid, sig);
      r.decision_signature = std::move(sig);  // stored with the update below
    }
    if (d.outcome == placement::Outcome::kRejected) {
      r.state = WorkloadState::kRejected;
      r.reason = d.reason;
      r.finished = now;
      ++stats.rejected;
      writes.updates.push_back({r, r.reason});
      continue;
    }
    ++stats.queued;
    if (r.state != WorkloadState::kQueued || changed) {
      r.state = WorkloadState::kQueued;
      r.reason = d.reason;
      writes.updates.push_back({r, r.reason});
    }
  }
  return FlushWrites(writes, stats);
}

Status Reconciler::AddPlacement(const placement::Decision& d, WorkloadRecord& r, PassWrites& writes) {
  const Duration now = clock_->Now();
  const model::Workload* spec = SpecOf(r);
  Result<connectors::Action> action = BuildSubmit(r, *spec, d);
  if (!action.ok()) return Internal("binding of " + r.name + ": " + action.status().message());
  const model::Cluster* cluster = revision_->config.FindCluster(d.binding.cluster);
  DecisionContext ctx{revision_->config.revision, now, r.attempt, placement::DecisionKind::kPlace, r.uid};
  ctx.cluster = cluster;
  writes.decisions.push_back({&d, std::move(ctx)});
  writes.intents.push_back({ActionKindName(action->kind), action->key, r.name, r.attempt, d.binding.cluster,
                            store::ActionState::kIntent, "", now, connectors::ActionToJson(*action).dump()});
  r.state = WorkloadState::kPlaced;
  r.cluster = d.binding.cluster;
  r.decision_signature.clear();  // its next Queued decision, if any, is journalled
  r.binding_json = placement::BindingToJson(d.binding).dump();
  r.estimate = d.cost;
  r.cloud = cluster && !cluster->is_onprem();
  r.reason = "placed on " + r.cluster + ": " + d.reason;
  writes.updates.push_back({r, r.reason});
  writes.placements.emplace_back(&r, std::move(*action));
  return Status::Ok();
}

Status Reconciler::JournalWrites(PassWrites& writes) {
  GPUFED_RETURN_IF_ERROR(CommitDecisions(writes.decisions, {}, {}, &writes.signatures));
  writes.decisions.clear();
  writes.signatures.clear();
  return Status::Ok();
}

Status Reconciler::JournalAndCommitWrites(PassWrites& writes) {
  // The intents and the Placed states commit with the decisions, or after them, and
  // before any connector is called.
  GPUFED_RETURN_IF_ERROR(CommitDecisions(writes.decisions, writes.intents, writes.updates, &writes.signatures));
  writes.decisions.clear();
  writes.signatures.clear();
  writes.intents.clear();
  writes.updates.clear();
  return Status::Ok();
}

Status Reconciler::CommitWrites(PassWrites& writes) {
  GPUFED_RETURN_IF_ERROR(store_->RecordIntentsAndUpdates(writes.intents, writes.updates, clock_->Now()));
  writes.intents.clear();
  writes.updates.clear();
  return Status::Ok();
}

void Reconciler::ApplyPlacements(PassWrites& writes, PassStats& stats) {
  std::vector<std::pair<WorkloadRecord*, connectors::Action>> placements = std::move(writes.placements);
  writes.placements.clear();
  std::vector<ActionResult> results;
  collecting_ = &results;
  for (auto& [record, action] : placements) {
    WorkloadRecord& r = *record;
    last_decision_.erase(r.uid);
    ++stats.placed;
    Status applied = ApplyAction(action, r.uid, r.cluster, stats);
    if (applied.ok() || Retryable(applied)) continue;
    // The cluster refused (counted in refusals_; the journal holds the action's result):
    // plan it again next pass, on the cluster's next report.
    r.state = WorkloadState::kQueued;
    r.reason = "cluster " + r.cluster + " refused: " + applied.message();
    r.cluster.clear();
    r.binding_json = "{}";
    r.estimate = Money(0, r.estimate.currency());
    writes.updates.push_back({r, r.reason});
  }
  collecting_ = nullptr;
  if (on_action_ && !results.empty()) on_action_(results);
}

Status Reconciler::FlushWrites(PassWrites& writes, PassStats& stats) {
  GPUFED_RETURN_IF_ERROR(JournalAndCommitWrites(writes));
  ApplyPlacements(writes, stats);
  // Placements the clusters refused go back to Queued, together.
  return CommitWrites(writes);
}

Status Reconciler::PlaceWithPreemption(const placement::Decision& d, WorkloadRecord& r, PassSnapshot& pass,
                                       PassWrites& writes, PassStats& stats) {
  GPUFED_RETURN_IF_ERROR(FlushWrites(writes, stats));
  GPUFED_RETURN_IF_ERROR(AddPlacement(d, r, writes));
  GPUFED_RETURN_IF_ERROR(JournalWrites(writes));
  for (const placement::Preemption& p : d.preempted) {
    auto victim = pass.running.find(QualifiedName(p.tenant, p.workload));
    if (victim == pass.running.end()) return Internal("preemption victim " + p.workload + " is not running");
    GPUFED_RETURN_IF_ERROR(StopVictim(p, d, *victim->second, stats));
    pass.running.erase(victim);
  }
  return FlushWrites(writes, stats);
}

}  // namespace gpufed::reconcile
