#pragma once
// The synthetic federation the placement benchmarks plan on: C clusters x 10 nodes x 8
// GPUs (whole, MIG or memory-shared; A100 or H100; on-prem and four clouds, EU and US,
// some without encryption at rest) and workloads of a realistic mix (mostly single
// GPUs, fractions on MIG and shared pools, 8-GPU NVLink gangs, a few multi-node gangs;
// public to restricted data), under the standard library's data-sensitivity and
// compliance-zones policies. Seeded: the same arguments give the same fleet.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <memory>
#include <random>
#include <vector>

#include "controller/model/config.h"
#include "policies/engine/hook_set.h"

namespace gpufed::bench {

model::Workload MakeWorkload(int index, std::mt19937& rng);

struct Fleet {
  model::Config config;
  std::vector<model::Workload> workloads;
  std::unique_ptr<policy::HookSet> hooks;  // null when the stdlib policies do not compile
  double bytes_per_workload = 0;           // heap each pending workload takes
  std::mt19937 rng{42};                    // continues where the fleet's workloads ended
};

// Heap bytes the process holds allocated now, from the allocator the binary links
// (jemalloc's statistics, or glibc's after returning freed memory), so memory counters
// are the same measure either way.
size_t HeapBytesInUse();

// `clusters` clusters, `pending` workloads (named w-0, w-1, ...) and ten tenants.
std::unique_ptr<Fleet> BuildFleet(int clusters, int pending);

// The counters every placement benchmark reports: decisions_per_s (over the benchmark's
// clock), and p50_us/p99_us of the gaps between decisions (`latencies`, sorted here).
void ReportDecisions(benchmark::State& state, int64_t decisions, std::vector<double>& latencies);

}  // namespace gpufed::bench
