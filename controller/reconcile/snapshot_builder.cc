#include "controller/reconcile/snapshot_builder.h"

#include <nlohmann/json.hpp>

namespace gpufed::reconcile {

using store::WorkloadRecord;

placement::ObservedCluster ToObservedCluster(const ClusterKnowledge& k) {
  placement::ObservedCluster out;
  // A cluster never observed, or past its grace period, offers nothing: work queues for
  // it rather than being bound to nodes nobody can confirm.
  out.healthy = k.healthy && k.observed && k.last != nullptr;
  if (!out.healthy) {
    out.down_reason = k.down_reason;
    return out;
  }
  for (const connectors::ObservedNode& n : k.last->nodes) {
    placement::ObservedNode node;
    node.name = n.name;
    node.pool = n.pool;
    node.ready = n.ready;
    node.free_cpu_milli = n.free_cpu_milli;
    node.free_memory = n.free_memory;
    for (const connectors::ObservedGpu& g : n.gpus)
      node.gpus.push_back({g.free_milli, g.free_memory, g.mig_slices_used});
    out.nodes.push_back(std::move(node));
  }
  return out;
}

void ObservedWorkloads::Index(const connectors::Observation& observation) {
  at_.clear();
  at_.reserve(observation.workloads.size());
  for (size_t i = 0; i < observation.workloads.size(); ++i) at_.try_emplace(observation.workloads[i].key, i);
}

const connectors::ObservedWorkload* ObservedWorkloads::Find(const connectors::Observation& observation,
                                                            const std::string& key) const {
  auto it = at_.find(key);
  if (it == at_.end() || it->second >= observation.workloads.size()) return nullptr;
  const connectors::ObservedWorkload& w = observation.workloads[it->second];
  return w.key == key ? &w : nullptr;  // an index of another observation finds nothing
}

const placement::Binding& BindingCache::Of(const std::string& binding_json) {
  auto [it, added] = entries_.try_emplace(binding_json);
  if (added) it->second.binding = placement::BindingFromJson(nlohmann::json::parse(binding_json, nullptr, false));
  it->second.used = true;
  return it->second.binding;
}

void BindingCache::Sweep() {
  std::erase_if(entries_, [](const auto& kv) { return !kv.second.used; });
  for (auto& [text, entry] : entries_) entry.used = false;
}

namespace {

// When the attempt's last checkpoint completed, in the snapshot's clock: the placer
// weighs victims by the work a preemption loses, which is the progress made since the
// checkpoint (work runs at one second of progress per second).
Duration LastCheckpointTime(const WorkloadRecord& r, Duration now) {
  if (r.checkpoint.millis() <= 0 || r.progress < r.checkpoint) return Duration();
  const int64_t since = r.progress.millis() - r.checkpoint.millis();
  return Duration::FromMillis(std::max<int64_t>(0, now.millis() - since));
}

// The workload with this key in the cluster's last report: by its index when it has one.
const connectors::ObservedWorkload* FindObserved(const ClusterKnowledge& k, const std::string& key) {
  if (k.workloads != nullptr) return k.workloads->Find(*k.last, key);
  for (const connectors::ObservedWorkload& w : k.last->workloads) {
    if (w.key == key) return &w;
  }
  return nullptr;
}

// When the current attempt started, as far as the store knows.
Duration AttemptStart(const WorkloadRecord& r, const std::map<std::string, ClusterKnowledge>& clusters) {
  auto c = clusters.find(r.cluster);
  if (c != clusters.end() && c->second.last != nullptr) {
    const connectors::ObservedWorkload* w = FindObserved(c->second, r.ActionKey());
    if (w != nullptr && w->started_at.millis() > 0) return w->started_at;
  }
  return r.started;
}

}  // namespace

PassSnapshot BuildSnapshot(const SnapshotSources& src) {
  PassSnapshot out;
  placement::SnapshotFacts facts;
  facts.config = &src.revision->config;
  facts.hooks = src.revision->hooks.get();
  facts.now = src.now;
  facts.fair_share = src.fair_share;
  facts.metered = src.metered;
  for (const auto& [name, knowledge] : src.clusters) facts.observed[name] = ToObservedCluster(knowledge);
  for (WorkloadRecord* r : src.records) {
    const bool active = store::IsActive(r->state);
    if (!active && !store::IsWaiting(r->state)) continue;
    const model::Workload* spec = src.spec_of(*r);
    if (spec == nullptr) continue;
    if (!active) {
      facts.pending.push_back(spec);
      out.pending[QualifiedName(r->tenant, r->name)] = r;
      continue;
    }
    // Active attempts count at their estimate until they finish and are metered.
    facts.estimates.push_back({r->tenant, r->estimate, r->cloud ? r->estimate : Money()});
    placement::RunningWorkload running;
    running.workload = spec;
    running.binding = src.bindings != nullptr
                          ? src.bindings->Of(r->binding_json)
                          : placement::BindingFromJson(nlohmann::json::parse(r->binding_json, nullptr, false));
    running.binding.cluster = r->cluster;
    running.started_at = AttemptStart(*r, src.clusters);
    running.last_checkpoint = LastCheckpointTime(*r, src.now);
    running.attempt = r->attempt;
    facts.running.push_back(std::move(running));
    out.running[QualifiedName(r->tenant, r->name)] = r;
  }
  out.snapshot = placement::BuildSnapshot(std::move(facts));
  if (src.bindings != nullptr) src.bindings->Sweep();
  return out;
}

}  // namespace gpufed::reconcile
