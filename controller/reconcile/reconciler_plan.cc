// Reconciler: the pass, planning of waiting work, and applying placements.
#include <nlohmann/json.hpp>

#include "connectors/core/action_json.h"
#include "controller/placement/inventory.h"
#include "controller/reconcile/reconciler.h"

namespace gpufed::reconcile {

using store::WorkloadRecord;
using store::WorkloadState;

namespace {

bool Retryable(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kDeadlineExceeded;
}

// What makes two queued decisions "the same" for the log: outcome and each cluster's
// verdict, not the reason text (which carries ever-changing wait times).
std::string Signature(const placement::Decision& d) {
  std::string sig = placement::OutcomeName(d.outcome);
  for (const placement::ClusterVerdict& v : d.verdicts) {
    sig += "|" + v.cluster + ":" + (v.eligible ? "e" : "-") + (v.fits_now ? "f" : "-") + v.rule;
  }
  return sig;
}

}  // namespace

Result<PassStats> Reconciler::Pass() {
  PassStats stats;
  if (!revision_) return FailedPrecondition("no active policy revision");
  ObserveClusters(stats);
  Result<std::vector<WorkloadRecord>> records = store_->List();
  if (!records.ok()) return records.status();
  for (WorkloadRecord& r : *records) {
    if (store::IsActive(r.state)) GPUFED_RETURN_IF_ERROR(SyncActive(r, stats));
  }
  if (!placing_) {
    last_plan_ = {};
    return stats;
  }
  GPUFED_RETURN_IF_ERROR(PlanWaiting(*records, stats));
  if (options_.preemption) GPUFED_RETURN_IF_ERROR(Preempt(*records, last_plan_, stats));
  return stats;
}

std::map<std::string, placement::TenantUsage> Reconciler::Usage(const std::vector<WorkloadRecord>& records) {
  std::map<std::string, placement::TenantUsage> usage;
  for (const model::Tenant& t : revision_->config.tenants) {
    usage[t.metadata.name] = {0, t.budget.spent, t.budget.cloud_spent};
  }
  Result<std::map<std::string, store::UsageRow>> booked = store_->Usage();
  if (booked.ok()) {
    for (const auto& [tenant, row] : *booked) {
      usage[tenant].spent = usage[tenant].spent.Plus(row.spent);
      usage[tenant].cloud_spent = usage[tenant].cloud_spent.Plus(row.cloud_spent);
    }
  }
  // Active attempts count at their estimate until they finish and are metered.
  for (const WorkloadRecord& r : records) {
    if (!store::IsActive(r.state)) continue;
    placement::TenantUsage& u = usage[r.tenant];
    u.gpu_milli_in_use += r.gpu_milli;
    u.spent = u.spent.Plus(r.estimate);
    if (r.cloud) u.cloud_spent = u.cloud_spent.Plus(r.estimate);
  }
  return usage;
}

Result<connectors::Action> Reconciler::BuildSubmit(const WorkloadRecord& r, const model::Workload& w,
                                                   const placement::Decision& d, const ResidualFleet& fleet) {
  connectors::Action a;
  a.kind = connectors::ActionKind::kSubmit;
  a.key = r.ActionKey();
  a.workload = r.name;
  a.tenant = r.tenant;
  a.attempt = r.attempt;
  GPUFED_RETURN_IF_ERROR(MapBinding(fleet, revision_->config, d.binding, a.nodes, a.provision_pool));
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
  // GPU memory taken on each GPU, from the pool the first member lands on.
  const model::Cluster* cluster = revision_->config.FindCluster(d.binding.cluster);
  std::string pool_name = a.provision_pool;
  if (pool_name.empty() && !a.nodes.empty()) {
    for (const connectors::ObservedNode& n : clusters_[d.binding.cluster].last.nodes) {
      if (n.name == a.nodes[0].node) pool_name = n.pool;
    }
  }
  for (const model::NodePool& p : cluster->node_pools) {
    if (p.name != pool_name) continue;
    if (a.gpu_milli_each >= 1000 && a.mig_profile.empty()) {
      a.gpu_memory_each = p.gpu.memory.milli() / 1000;
    } else if (placement::PoolShapeMismatch(p, w.resources).empty()) {
      a.gpu_memory_each = placement::DemandOn(p, w.resources).memory_each;
    }
  }
  return a;
}

Status Reconciler::PlanWaiting(std::vector<WorkloadRecord>& records, PassStats& stats) {
  Duration now = clock_->Now();
  std::vector<const model::Workload*> pending;
  std::map<std::string, WorkloadRecord*> by_name;
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
    // A crash between recording a submit intent and marking the workload Placed leaves
    // a waiting workload whose current key may already run somewhere: adopt that
    // placement instead of planning again (which could start the key twice).
    Result<std::optional<store::ActionRow>> intent = store_->GetAction("submit", r.ActionKey());
    if (!intent.ok()) return intent.status();
    if (*intent && (*intent)->state != store::ActionState::kFailed) {
      nlohmann::json payload = nlohmann::json::parse((*intent)->payload, nullptr, false);
      r.state = WorkloadState::kPlaced;
      r.cluster = (*intent)->cluster;
      if (!payload.is_discarded()) {
        r.binding_json = nlohmann::json{{"cluster", r.cluster}, {"nodes", payload.value("nodes", nlohmann::json::array())},
                                        {"provision_pool", payload.value("provision_pool", "")},
                                        {"gpu_milli_each", payload.value("gpu_milli_each", 1000)}}
                             .dump();
      }
      r.reason = "placed on " + r.cluster + " (recovered an unfinished placement)";
      GPUFED_RETURN_IF_ERROR(store_->Update(r, r.reason, now));
      continue;
    }
    pending.push_back(spec);
    by_name[r.name] = &r;
  }
  last_plan_ = {};
  if (pending.empty()) return Status::Ok();
  std::map<std::string, ObservedCluster> observed;
  for (const auto& [name, cs] : clusters_) observed[name] = {cs.healthy && cs.observed, cs.last};
  ResidualFleet fleet = BuildResidualFleet(revision_->config, observed);
  placement::Snapshot snapshot;
  snapshot.config = &fleet.config;
  snapshot.pending = pending;
  snapshot.now = now;
  snapshot.usage = Usage(records);
  snapshot.hooks = revision_->hooks.get();
  last_plan_ = placement::MakePlan(snapshot);
  GPUFED_RETURN_IF_ERROR(log_->BeginPass(last_plan_, snapshot));
  for (const placement::Decision& d : last_plan_.decisions) {
    auto it = by_name.find(d.workload);
    if (it == by_name.end()) continue;
    WorkloadRecord& r = *it->second;
    DecisionContext ctx{revision_->config.revision, now, r.attempt, "place", r.uid};
    ++stats.decisions;
    std::string sig = Signature(d);
    if (d.outcome == placement::Outcome::kPlaced) {
      const model::Workload* spec = SpecOf(r);
      Result<connectors::Action> action = BuildSubmit(r, *spec, d, fleet);
      if (!action.ok()) return Internal("binding of " + r.name + ": " + action.status().message());
      GPUFED_RETURN_IF_ERROR(log_->Record(d, ctx));
      store::ActionRow row{"submit", action->key, r.name, r.attempt, d.binding.cluster, store::ActionState::kIntent,
                           "", now, connectors::ActionToJson(*action).dump()};
      GPUFED_RETURN_IF_ERROR(store_->RecordActionIntent(row));
      const model::Cluster* cluster = revision_->config.FindCluster(d.binding.cluster);
      r.state = WorkloadState::kPlaced;
      r.cluster = d.binding.cluster;
      nlohmann::json nodes = nlohmann::json::array();
      for (const connectors::NodeAssignment& n : action->nodes) nodes.push_back({{"node", n.node}, {"gpus", n.gpus}});
      r.binding_json = nlohmann::json{{"cluster", r.cluster}, {"nodes", nodes}, {"provision_pool", action->provision_pool},
                                      {"gpu_milli_each", action->gpu_milli_each}}
                           .dump();
      r.estimate = d.cost;
      r.cloud = cluster && !cluster->is_onprem();
      r.reason = "placed on " + r.cluster + ": " + d.reason;
      GPUFED_RETURN_IF_ERROR(store_->Update(r, r.reason, now));
      last_decision_.erase(r.name);
      ++stats.placed;
      Status applied = ApplyAction(*action, r.cluster, stats);
      if (!applied.ok() && !Retryable(applied)) {
        // The cluster refused (capacity raced away, unknown node): plan it again.
        r.state = WorkloadState::kQueued;
        r.reason = "cluster " + r.cluster + " refused: " + applied.message();
        r.cluster.clear();
        r.binding_json = "{}";
        r.estimate = Money(0, r.estimate.currency());
        GPUFED_RETURN_IF_ERROR(store_->Update(r, r.reason, now));
      }
      continue;
    }
    bool changed = last_decision_[r.name] != sig;
    if (changed) {
      GPUFED_RETURN_IF_ERROR(log_->Record(d, ctx));
      last_decision_[r.name] = sig;
    }
    if (d.outcome == placement::Outcome::kRejected) {
      r.state = WorkloadState::kRejected;
      r.reason = d.reason;
      r.finished = now;
      ++stats.rejected;
      GPUFED_RETURN_IF_ERROR(store_->Update(r, r.reason, now));
      continue;
    }
    ++stats.queued;
    if (r.state != WorkloadState::kQueued || changed) {
      r.state = WorkloadState::kQueued;
      r.reason = d.reason;
      GPUFED_RETURN_IF_ERROR(store_->Update(r, r.reason, now));
    }
  }
  return Status::Ok();
}

}  // namespace gpufed::reconcile
