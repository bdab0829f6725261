#include "controller/placement/snapshot_builder.h"

namespace gpufed::placement {

Snapshot BuildSnapshot(SnapshotFacts facts) {
  Snapshot s;
  const model::Config& config = *facts.config;
  s.config = &config;
  s.hooks = facts.hooks;
  s.now = facts.now;
  s.pending = std::move(facts.pending);
  s.running = std::move(facts.running);
  s.onprem_queue_depth = facts.onprem_queue_depth;
  s.explain_clusters = facts.explain_clusters;
  s.pod_mix = std::move(facts.pod_mix);
  for (auto& [name, cluster] : facts.observed) {
    if (config.FindCluster(name) != nullptr) s.observed.emplace(name, std::move(cluster));
  }
  if (facts.recorded_usage) {
    s.usage = std::move(*facts.recorded_usage);
    s.fair_share_half_life = facts.fair_share_half_life;
    return s;
  }
  // Every declared tenant appears, so the snapshot (and a replay of it) never falls back
  // to the Tenant's declared spend for one tenant and not another.
  AddSpendToUsage(ComputeTenantSpend(config, {facts.now, std::move(facts.metered), std::move(facts.estimates)}),
                  s.usage);
  if (facts.fair_share != nullptr) {
    s.fair_share_half_life = facts.fair_share->half_life();
    for (auto& [tenant, u] : s.usage) u.decayed_gpu_hours = facts.fair_share->DecayedGpuHours(tenant);
  } else {
    s.fair_share_half_life = facts.fair_share_half_life;
  }
  return s;
}

}  // namespace gpufed::placement
