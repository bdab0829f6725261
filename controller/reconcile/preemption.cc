// Reconciler::Preempt: stops lower-priority preemptible work for a higher-priority
// workload that waits only for capacity.
//
// Why here and not in the placer: the placer at the time of writing has no preemption
// (issue 5 adds it, with Snapshot::running and Decision::preempted). This is the
// deliberately small version: single-node whole-GPU requests only, victims on one node
// (checkpointable first, then lowest priority, then the most recently started), one
// preemption at a time, and only after the workload has waited `preempt_after`. When
// the placer reports Decision::preempted, the loop should act on that instead.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "connectors/core/action_json.h"
#include "controller/reconcile/reconciler.h"

namespace gpufed::reconcile {

using store::WorkloadRecord;
using store::WorkloadState;

namespace {

int GpusOn(const WorkloadRecord& r, const std::string& node) {
  nlohmann::json b = nlohmann::json::parse(r.binding_json, nullptr, false);
  if (b.is_discarded() || !b.contains("nodes")) return 0;
  if (b.value("gpu_milli_each", 1000) < 1000) return 0;
  int n = 0;
  for (const auto& m : b["nodes"]) {
    if (m.value("node", "") == node) n += static_cast<int>(m["gpus"].size());
  }
  return n;
}

}  // namespace

Status Reconciler::Preempt(std::vector<WorkloadRecord>& records, const placement::Plan& plan, PassStats& stats) {
  Duration now = clock_->Now();
  std::map<std::string, WorkloadRecord*> by_name;
  for (WorkloadRecord& r : records) by_name[r.name] = &r;
  for (auto it = preempting_.begin(); it != preempting_.end();) {
    auto r = by_name.find(it->first);
    it = (r == by_name.end() || !store::IsActive(r->second->state)) ? preempting_.erase(it) : std::next(it);
  }
  if (!preempting_.empty()) return Status::Ok();  // earlier victims are still stopping
  for (const placement::Decision& d : plan.decisions) {
    if (d.outcome != placement::Outcome::kQueued) continue;
    auto rit = by_name.find(d.workload);
    if (rit == by_name.end()) continue;
    const WorkloadRecord& waiting = *rit->second;
    const model::Workload* spec = SpecOf(waiting);
    if (!spec || spec->resources.is_fractional() || spec->resources.nodes > 1) continue;
    if (now.millis() - waiting.submitted.millis() < options_.preempt_after.millis()) continue;
    int need = spec->resources.total_gpus();
    for (const placement::ClusterVerdict& v : d.verdicts) {
      if (!v.eligible || v.fits_now) continue;
      const ClusterStatus& cs = clusters_[v.cluster];
      if (!cs.healthy) continue;
      for (const connectors::ObservedNode& node : cs.last.nodes) {
        if (!node.ready) continue;
        int free = 0;
        for (const connectors::ObservedGpu& g : node.gpus) free += g.free_milli == 1000 ? 1 : 0;
        std::vector<WorkloadRecord*> candidates;
        for (WorkloadRecord& r : records) {
          if (r.state != WorkloadState::kRunning || r.cluster != v.cluster || GpusOn(r, node.name) == 0) continue;
          const model::Workload* vs = SpecOf(r);
          if (vs && vs->preemptible && vs->priority < spec->priority) candidates.push_back(&r);
        }
        std::sort(candidates.begin(), candidates.end(), [&](WorkloadRecord* a, WorkloadRecord* b) {
          const model::Workload* sa = SpecOf(*a);
          const model::Workload* sb = SpecOf(*b);
          if (sa->checkpoint.enabled != sb->checkpoint.enabled) return sa->checkpoint.enabled;
          if (sa->priority != sb->priority) return sa->priority < sb->priority;
          return a->started > b->started;
        });
        std::vector<WorkloadRecord*> victims;
        for (WorkloadRecord* c : candidates) {
          if (free >= need) break;
          victims.push_back(c);
          free += GpusOn(*c, node.name);
        }
        if (free < need || victims.empty()) continue;
        for (WorkloadRecord* victim : victims) {
          placement::Decision pd;
          pd.workload = victim->name;
          pd.tenant = victim->tenant;
          pd.priority = SpecOf(*victim)->priority;
          pd.outcome = placement::Outcome::kQueued;
          pd.binding.cluster = v.cluster;
          pd.binding.nodes = {node.name};
          pd.reason = "preempted for " + d.workload + " (priority " + std::to_string(spec->priority) + " > " +
                      std::to_string(pd.priority) + ") on " + v.cluster + "/" + node.name;
          GPUFED_RETURN_IF_ERROR(log_->Record(pd, {revision_->config.revision, now, victim->attempt, "preempt", victim->uid}));
          connectors::Action a{connectors::ActionKind::kPreempt, victim->ActionKey(), victim->name, victim->tenant,
                               victim->attempt};
          a.reason = pd.reason;
          GPUFED_RETURN_IF_ERROR(store_->RecordActionIntent({"preempt", a.key, a.workload, a.attempt, v.cluster,
                                                             store::ActionState::kIntent, "", now,
                                                             connectors::ActionToJson(a).dump()}));
          (void)ApplyAction(a, v.cluster, stats);
          preempting_[victim->name] = now;
          ++stats.preempted;
        }
        return Status::Ok();  // one preemption at a time
      }
    }
  }
  return Status::Ok();
}

}  // namespace gpufed::reconcile
