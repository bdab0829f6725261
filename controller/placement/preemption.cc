// Preemption: a workload that cannot fit on an on-prem cluster may displace running
// work of lower priority that is marked preemptible. The victim set is minimal (no
// victim can be spared), checkpointable victims are taken before others, and no victim
// is taken whose tenant would drop below its guaranteed GPUs.
#include <algorithm>
#include <map>

#include "controller/common/text.h"
#include "controller/placement/placer.h"
#include "controller/placement/placer_rules.h"

namespace gpufed::placement {
namespace {

// Run time a victim loses: since its last checkpoint when it checkpoints, else since start.
Duration LostWork(const RunningWorkload& r, Duration now) {
  Duration since = r.started_at;
  if (r.workload->checkpoint.enabled && r.last_checkpoint > since) since = r.last_checkpoint;
  return now > since ? Duration::FromMillis(now.millis() - since.millis()) : Duration();
}

struct VictimSet {
  std::vector<size_t> victims;  // indices into running_
  int not_checkpointable = 0;
  double lost_gpu_seconds = 0;

  bool BetterThan(const VictimSet& o) const {
    if (victims.size() != o.victims.size()) return victims.size() < o.victims.size();
    if (not_checkpointable != o.not_checkpointable) return not_checkpointable < o.not_checkpointable;
    return lost_gpu_seconds < o.lost_gpu_seconds;
  }
};

}  // namespace

void Placer::ReleaseEntry(ClusterState& state, const RunningEntry& r) const {
  for (const auto& [node, fit] : r.fits()) Release(state, node, fit, r.running->workload->resources);
}

bool Placer::VictimAllowed(const model::Workload& w, const RunningEntry& r,
                           std::map<std::string, int64_t>& freed) const {
  const model::Workload& v = *r.running->workload;
  if (!r.active || !v.preemptible || v.priority >= w.priority) return false;
  auto it = tenants_.find(v.tenant);
  if (it == tenants_.end() || it->second.tenant == nullptr) return true;
  const int64_t guaranteed = int64_t{it->second.tenant->guaranteed_gpus} * 1000;
  const int64_t left = it->second.usage.gpu_milli_in_use - freed[v.tenant] - r.gpu_milli;
  return left >= guaranteed;
}

std::optional<Placer::Candidate> Placer::PreemptFor(const model::Workload& w, size_t c,
                                                    const std::vector<bool>& pool_allowed, Decision& d) {
  if (lowest_preemptible_priority_[c] >= w.priority) return std::nullopt;  // no possible victim
  ClusterEntry& entry = clusters_[c];
  const Duration now = snapshot_.now;
  std::vector<size_t> pool;
  int64_t freeable = 0;
  for (uint32_t i : RunningOn(c)) {
    RunningEntry& r = running_[i];
    if (!r.active || !r.running->workload->preemptible || r.running->workload->priority >= w.priority) continue;
    Resolve(r);
    pool.push_back(i);
    freeable += r.gpu_milli;
  }
  if (pool.empty()) return std::nullopt;
  int64_t free_now = 0;
  for (const NodeState& node : entry.state.nodes) {
    for (const GpuState& g : node.gpus) free_now += g.free_milli;
  }
  if (free_now + freeable < RequestedGpuMilli(w.resources)) return std::nullopt;
  // Checkpointable first, then the lowest priority, then the least work lost, then name.
  std::sort(pool.begin(), pool.end(), [&](size_t a, size_t b) {
    const RunningWorkload& ra = *running_[a].running;
    const RunningWorkload& rb = *running_[b].running;
    if (ra.workload->checkpoint.enabled != rb.workload->checkpoint.enabled) return ra.workload->checkpoint.enabled;
    if (ra.workload->priority != rb.workload->priority) return ra.workload->priority < rb.workload->priority;
    const Duration la = LostWork(ra, now), lb = LostWork(rb, now);
    if (la != lb) return la < lb;
    return ra.workload->metadata.name < rb.workload->metadata.name;
  });
  auto fits = [&]() { return FindCandidate(w, c, pool_allowed).has_value(); };
  // Greedy in preference order until it fits, then drop every victim it can spare.
  // Works in place on the cluster state and undoes itself before returning.
  auto search = [&](const std::vector<size_t>& order) -> std::optional<VictimSet> {
    std::vector<size_t> chosen;
    std::map<std::string, int64_t> freed;
    bool ok = false;
    for (size_t i : order) {
      if (!VictimAllowed(w, running_[i], freed)) continue;
      ReleaseEntry(entry.state, running_[i]);
      freed[running_[i].running->workload->tenant] += running_[i].gpu_milli;
      chosen.push_back(i);
      if ((ok = fits())) break;
    }
    std::optional<VictimSet> result;
    if (ok) {
      for (size_t k = chosen.size(); k-- > 0;) {
        const RunningEntry& r = running_[chosen[k]];
        for (const auto& [node, fit] : r.fits()) Reserve(entry.state, node, fit, r.running->workload->resources);
        if (fits()) {
          chosen.erase(chosen.begin() + static_cast<std::ptrdiff_t>(k));
        } else {
          ReleaseEntry(entry.state, r);
        }
      }
      VictimSet set;
      set.victims = chosen;
      for (size_t i : chosen) {
        const RunningEntry& r = running_[i];
        set.not_checkpointable += r.running->workload->checkpoint.enabled ? 0 : 1;
        set.lost_gpu_seconds += r.gpu_milli / 1000.0 * LostWork(*r.running, now).seconds();
      }
      result = std::move(set);
    }
    for (size_t i : chosen) {
      const RunningEntry& r = running_[i];
      for (const auto& [node, fit] : r.fits()) Reserve(entry.state, node, fit, r.running->workload->resources);
    }
    return result;
  };
  std::optional<VictimSet> best;
  if (w.resources.nodes <= 1) {
    // A single-node workload needs room on one node: try each node's victims alone.
    std::map<int, std::vector<size_t>> by_node;
    for (size_t i : pool) {
      for (const auto& [node, fit] : running_[i].fits()) by_node[node].push_back(i);
    }
    for (const auto& [node, order] : by_node) {
      std::optional<VictimSet> set = search(order);
      if (set && (!best || set->BetterThan(*best))) best = std::move(set);
    }
  }
  // A gang, or GPUs that may spread over nodes when no one node can be freed.
  if (!best && (w.resources.nodes > 1 || Spreads(w.resources))) best = search(pool);
  if (!best) return std::nullopt;

  for (size_t i : best->victims) {
    RunningEntry& r = running_[i];
    ReleaseEntry(entry.state, r);
    r.active = false;
    const model::Workload& v = *r.running->workload;
    Tenant(v.tenant).usage.gpu_milli_in_use -= r.gpu_milli;
    Preemption p;
    p.workload = v.metadata.name;
    p.tenant = v.tenant;
    p.priority = v.priority;
    p.cluster = entry.cluster->metadata.name;
    p.nodes = r.running->binding.nodes;
    p.gpu_milli = r.gpu_milli;
    p.checkpointable = v.checkpoint.enabled;
    p.lost_work = LostWork(*r.running, now);
    // The victim's tenant reads this reason: another tenant's workload stays unnamed and
    // its priority unsaid (the decision's `preempted` list and the journal name both
    // sides for auditors).
    const std::string by = v.tenant == w.tenant ? w.metadata.name + " (priority " + std::to_string(w.priority) + " > " +
                                                      std::to_string(v.priority) + ")"
                                                : "a workload of another tenant (of a higher priority)";
    p.reason = "preempted by " + by + ", frees " + FormatGpus(r.gpu_milli) + " GPU(s) on " + p.cluster + "; " +
               (p.checkpointable ? "resumes from its checkpoint, loses " + p.lost_work.ToString()
                                 : "not checkpointable, loses " + p.lost_work.ToString() + " of work") +
               "; requeued as attempt " + std::to_string(r.running->attempt + 1);
    d.preempted.push_back(std::move(p));
  }
  std::optional<Candidate> candidate = FindCandidate(w, c, pool_allowed);
  return candidate;
}

}  // namespace gpufed::placement
