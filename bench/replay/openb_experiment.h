#pragma once
// The FGD paper's openb experiment (see /work/shared/data/README.md):
//   1. the node list, order permuted per seed;
//   2. inflation: all original pods, then pods drawn uniformly with replacement
//      until the next one would push the total GPU request above ratio x capacity
//      (above it already: random originals are dropped until it fits, as the
//      reference simulator's tune-down does);
//   3. a seeded shuffle; every pod arrives once, is placed or dropped, never leaves.
// Everything random derives from the seed alone, so a (seed, policy) run gives the
// same result whatever else runs beside it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "controller/common/status.h"
#include "controller/placement/packing/fleet.h"
#include "controller/placement/packing/workload.h"

namespace gpufed::replay {

struct OpenbTrace {
  std::vector<packing::NodeSpec> nodes;
  std::vector<packing::PodRequest> pods;
};

// One arrival: an original pod, or the n-th inflation copy of one.
struct Arrival {
  uint32_t pod = 0;    // index into OpenbTrace::pods
  int32_t copy = -1;   // -1 for the original, else the inflation counter
};

struct SeedWorkload {
  uint64_t seed = 0;
  std::vector<size_t> node_order;  // node_order[i] = index into OpenbTrace::nodes
  std::vector<Arrival> arrivals;
};

SeedWorkload BuildSeedWorkload(const OpenbTrace& trace, uint64_t seed, double inflation_ratio = 1.3);

// Name of an arrival as written to placement files: "<pod>" or "<pod>-tuned-<n>".
std::string ArrivalName(const OpenbTrace& trace, const Arrival& a);

struct RunResult {
  std::vector<double> levels;       // mean allocated% per arrived level 0..130
  // Mean fragmentation per arrived level, % of GPU capacity: FGD's measure (expected GPU
  // milli the typical pods of `distribution` could not use, summed over nodes), the
  // quantity the FGD paper plots beside allocation.
  std::vector<double> frag_levels;
  int64_t placed = 0;
  int64_t failed = 0;
  std::string placements_csv;  // rows (no header) when requested
};

// Replays `workload` with policy `policy`. InvalidArgument for an unknown policy;
// Internal if a policy returns an allocation the fleet rejects (a bug).
Result<RunResult> RunOpenb(const OpenbTrace& trace, const SeedWorkload& workload, std::string_view policy,
                           const packing::WorkloadDistribution& distribution, bool record_placements);

}  // namespace gpufed::replay
