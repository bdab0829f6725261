// The reconciler's view of clusters that stop answering: observations and health, the
// attempts kept on a silent cluster until its lostAfter, and the attempts given up
// (detached_attempts.h) settled once their cluster answers again.
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "connectors/core/action_json.h"
#include "controller/common/utf8.h"
#include "controller/reconcile/reconciler.h"

namespace gpufed::reconcile {

using store::WorkloadRecord;
using store::WorkloadState;

namespace {

// A cancel of a detached attempt is sent again when the cluster still reports the job
// running this long after the last one (a cancel the cluster accepted and lost).
constexpr Duration kDetachedCancelRetry = Duration::FromSeconds(30);

Duration Since(Duration from, Duration now) { return Duration::FromMillis(now.millis() - from.millis()); }

}  // namespace

Observations Reconciler::Collect() const {
  // Every cluster, every pass, failing ones too: observing changes nothing, and a cluster
  // that answers again is healthy at the next pass instead of after an error backoff (a
  // cluster that hangs costs each pass its connector timeout, outside the API's lock).
  Observations out;
  for (const std::string& name : connectors_.Names()) {
    out.emplace_back(name, connectors_.Find(name)->Observe(Context(name)));
  }
  return out;
}

model::ClusterHealth Reconciler::HealthOf(const std::string& cluster) const {
  const model::Cluster* declared = revision_ != nullptr ? revision_->config.FindCluster(cluster) : nullptr;
  return declared != nullptr ? declared->health : model::ClusterHealth{};
}

void Reconciler::ApplyObservations(Observations observed, PassStats& stats) {
  Duration now = clock_->Now();
  for (auto& [name, obs] : observed) {
    if (connectors_.Find(name) == nullptr) continue;  // retired meanwhile
    ClusterStatus& cs = clusters_[name];
    cs.health = HealthOf(name);  // looked up once a pass, not once per workload there
    if (obs.ok() && obs->healthy) {
      cs.last = std::move(obs).value();
      cs.workloads.Index(cs.last);
      cs.healthy = true;
      cs.observed = true;
      cs.consecutive_errors = 0;
      ++stats.observed_clusters;
      continue;
    }
    if (cs.consecutive_errors == 0) cs.failing_since = now;
    ++cs.consecutive_errors;
    ++cs.total_errors;
    // A cluster's words reach every waiting workload's verdict ("cluster unhealthy since T:
    // last error: ..."), the journal and the API: kept short and valid UTF-8, whatever the
    // connector passed on.
    cs.last_error = obs.ok() ? "reports unhealthy" : BoundedUtf8(obs.status().message(), 512, Controls::kToSpaces);
    if (Since(cs.failing_since, now) >= cs.health.unhealthy_after) cs.healthy = false;
  }
}

Status Reconciler::SyncUnanswered(WorkloadRecord& r, const ClusterStatus& cluster, PassStats& stats) {
  const Duration now = clock_->Now();
  const model::ClusterHealth& health = cluster.health;
  const Duration silent = Since(cluster.failing_since, now);
  // Silence is not an end: slurmd runs its jobs while slurmctld is down, a partitioned
  // node keeps its pods. Until lostAfter the attempt stays the cluster's, so nothing runs
  // it a second time, and a cancel waits for the cluster (SyncActive sends it then).
  if (silent < health.lost_after) return Status::Ok();
  // Given up: recorded before the requeue, so a crash between the two cannot leave a job
  // that nobody cancels. Booked when the cluster reports its end (SettleDetached).
  DetachedAttempt d{r.ActionKey(),
                    r.uid,
                    r.name,
                    r.tenant,
                    r.attempt,
                    r.cluster,
                    r.cloud,
                    r.cancel_requested ? "cancelled" : "lost",
                    now};
  d.last_heard = cluster.failing_since;
  if (const connectors::ObservedWorkload* last = Seen(r.cluster, d.key)) {
    d.last_gpu_seconds = last->gpu_seconds;
    d.last_cost = last->cost;
    d.started = last->started_at;
  }
  GPUFED_RETURN_IF_ERROR(detached_.Add(d, *store_));
  ++stats.detached;
  const std::string why = "cluster " + r.cluster + " has not answered for " + silent.ToString() + " (lostAfter " +
                          health.lost_after.ToString() + "; last error: " + cluster.last_error + "); attempt " +
                          std::to_string(r.attempt) + " is cancelled there when it answers again";
  if (r.cancel_requested) {
    r.state = WorkloadState::kCancelled;
    r.finished = now;
    r.reason = "cancelled by request; " + why;
    ++stats.finished;
    return UpdateRecord(r, r.reason, now);
  }
  return Requeue(r, why, true, stats);
}

Status Reconciler::SettleDetached(std::vector<WorkloadRecord>& records, PassStats& stats) {
  GPUFED_RETURN_IF_ERROR(detached_.Load(*store_));
  if (detached_.entries().empty()) return Status::Ok();
  std::unordered_map<std::string_view, WorkloadRecord*> by_uid;
  for (WorkloadRecord& r : records) by_uid[r.uid] = &r;
  const Duration now = clock_->Now();
  const std::map<std::string, DetachedAttempt> pending = detached_.entries();
  for (const auto& [key, d] : pending) {
    auto found = by_uid.find(d.uid);
    WorkloadRecord* live = found != by_uid.end() ? found->second : nullptr;
    if (live != nullptr && live->attempt == d.attempt && store::IsActive(live->state)) {
      // A crash after the entry and before the requeue: the attempt was never given up.
      GPUFED_RETURN_IF_ERROR(detached_.Remove(key, *store_));
      continue;
    }
    if (connectors_.Find(d.cluster) == nullptr) {  // removed from the federation: nobody to ask
      GPUFED_RETURN_IF_ERROR(BookDetached(d, nullptr, live));
      continue;
    }
    auto cit = clusters_.find(d.cluster);
    if (cit == clusters_.end() || cit->second.consecutive_errors > 0 || !cit->second.observed) continue;
    const connectors::ObservedWorkload* seen = Seen(d.cluster, key);
    if (seen == nullptr || connectors::IsFinished(seen->state)) {
      // Ended: booked from the cluster's own record of the job, not from when gpufed
      // stopped hearing of it. Unknown to the cluster (a submit that never arrived, an end
      // it has forgotten): from the last report before the silence.
      GPUFED_RETURN_IF_ERROR(BookDetached(d, seen, live));
      continue;
    }
    auto sent = detached_cancel_sent_.find(key);
    if (sent != detached_cancel_sent_.end() && Since(sent->second, now) < kDetachedCancelRetry) continue;
    connectors::Action cancel{connectors::ActionKind::kCancel, key, d.workload, d.tenant, d.attempt};
    cancel.reason = d.outcome == "cancelled" ? "cancelled by request while " + d.cluster + " did not answer"
                                             : "superseded: given up while " + d.cluster + " did not answer";
    GPUFED_RETURN_IF_ERROR(store_->RecordActionIntent({ActionKindName(connectors::ActionKind::kCancel), key, d.workload,
                                                       d.attempt, d.cluster, store::ActionState::kIntent, "", now,
                                                       connectors::ActionToJson(cancel).dump()}));
    if (ApplyAction(cancel, d.uid, d.cluster, stats).ok()) detached_cancel_sent_[key] = now;
  }
  return Status::Ok();
}

Status Reconciler::BookDetached(const DetachedAttempt& d, const connectors::ObservedWorkload* seen,
                                WorkloadRecord* live) {
  store::AttemptRow a;
  a.uid = d.uid;
  a.workload = d.workload;
  a.attempt = d.attempt;
  a.tenant = d.tenant;
  a.cluster = d.cluster;
  a.outcome = d.outcome;
  a.cloud = d.cloud;
  // No record on the cluster: the last report before the silence, the least it ran.
  connectors::ObservedWorkload last;
  if (seen == nullptr) {
    last.gpu_seconds = d.last_gpu_seconds;
    last.cost = d.last_cost;
    last.started_at = d.started;
    last.finished_at = d.last_heard;
    seen = &last;
  }
  GPUFED_RETURN_IF_ERROR(BookAttemptRow(a, seen));
  if (seen->cost.micros() != 0) {
    // The workload's own total counts every attempt, as BookAttempt's callers keep it.
    WorkloadRecord* r = live;
    std::optional<WorkloadRecord> finished;
    if (r == nullptr) {
      Result<std::optional<WorkloadRecord>> stored = store_->GetByUid(d.uid);
      if (!stored.ok()) return stored.status();
      finished = std::move(*stored);
      if (finished) r = &*finished;
    }
    if (r != nullptr) {
      if (Result<Money> total = r->cost.Plus(seen->cost); total.ok()) {
        r->cost = *total;
        GPUFED_RETURN_IF_ERROR(store_->Update(*r, r->reason, clock_->Now()));
      }
    }
  }
  detached_cancel_sent_.erase(d.key);
  // Removing the entry commits the booking with it.
  return detached_.Remove(d.key, *store_);
}

}  // namespace gpufed::reconcile
