#pragma once
// The one builder of the placer's Snapshot. Every path that plans states what it knows in
// SnapshotFacts and gets its snapshot here: `gpufed run` and `plan --state` (the reconcile
// loop adapts its store's records, reconcile/snapshot_builder.h), `gpufed plan` and
// `audit record` (the repository's or the given workloads, on the declared node pools),
// `audit replay` (the journal's recorded inputs), and PolicyTests (a case's given state,
// policies/engine/case_state.h). So tenant usage, fair share and observed clusters mean
// the same on every path:
//
//   - usage: every declared tenant, and every tenant a charge names, with its spend
//     (tenant_spend.h: declared seed + metered this period + running estimates) and its
//     decayed GPU-hours from the fair-share ledger, or, for a replay, the usage exactly
//     as recorded;
//   - observed: only clusters the config declares (a report of a cluster a revision
//     removed is not planned on).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/placement/fair_share.h"
#include "controller/placement/plan.h"
#include "controller/placement/tenant_spend.h"

namespace gpufed::placement {

struct SnapshotFacts {
  const model::Config* config = nullptr;  // must outlive the snapshot
  PolicyHooks* hooks = nullptr;           // may be null
  Duration now;
  std::vector<const model::Workload*> pending;  // in order; must outlive the snapshot
  std::vector<RunningWorkload> running;         // bound already (workloads must outlive it)
  std::map<std::string, ObservedCluster> observed;  // absent clusters: the declared node pools
  // Charges the tenants' spend is computed from (ComputeTenantSpend at `now`).
  std::vector<MeteredSpend> metered;
  std::vector<EstimatedSpend> estimates;
  // The usage a journal recorded: taken as it is instead of computing it (a replay
  // re-runs the placer on exactly what it read then).
  std::optional<std::map<std::string, TenantUsage>> recorded_usage;
  // Decayed GPU-hours per tenant and the half-life; null: none (0 hours, and
  // `fair_share_half_life`).
  const FairShareLedger* fair_share = nullptr;
  Duration fair_share_half_life;  // without a ledger (0: the placer's default)
  int onprem_queue_depth = 0;
  size_t explain_clusters = Snapshot::kExplainAllClusters;
  std::vector<std::pair<model::ResourceRequest, int64_t>> pod_mix;  // empty: the plan's own work
};

Snapshot BuildSnapshot(SnapshotFacts facts);

}  // namespace gpufed::placement
