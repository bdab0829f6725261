// Placement throughput on a large federation: C clusters x 10 nodes x 8 GPUs and P
// pending workloads of a realistic mix (mostly single GPUs, fractions on MIG and shared
// pools, 8-GPU NVLink gangs, a few multi-node gangs; public to restricted data), under
// the standard library's data-sensitivity and compliance-zones policies: YAML rules
// only, and YAML rules plus their Lua hooks, side by side. Reports decisions per second
// on one core, p50/p99 per decision (timed between decisions through the snapshot's
// on_decision observer) and the memory each pending workload takes.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bench/fleet.h"
#include "controller/placement/plan.h"

namespace {

using gpufed::bench::BuildFleet;
using gpufed::bench::Fleet;
namespace model = gpufed::model;

void PlanFleet(benchmark::State& state, bool with_lua) {
  const int clusters = static_cast<int>(state.range(0));
  const int pending = static_cast<int>(state.range(1));
  std::unique_ptr<Fleet> fleet = BuildFleet(clusters, pending);
  if (!fleet->hooks) {
    state.SkipWithError("stdlib policies did not compile");
    return;
  }
  gpufed::placement::Snapshot snapshot;
  snapshot.config = &fleet->config;
  for (const model::Workload& w : fleet->workloads) snapshot.pending.push_back(&w);
  snapshot.hooks = with_lua ? fleet->hooks.get() : nullptr;
  std::vector<double> latencies;
  latencies.reserve(pending);
  auto last = std::chrono::steady_clock::now();
  snapshot.on_decision = [&](const gpufed::placement::Decision&) {
    auto now = std::chrono::steady_clock::now();
    latencies.push_back(std::chrono::duration<double, std::micro>(now - last).count());
    last = now;
  };
  int64_t decisions = 0;
  double plan_bytes_per_decision = 0;
  for (auto _ : state) {
    state.PauseTiming();  // the clock covers MakePlan only: not the heap accounting, not freeing the plan
    latencies.clear();
    const size_t before = gpufed::bench::HeapBytesInUse();
    state.ResumeTiming();
    last = std::chrono::steady_clock::now();
    auto plan = std::make_unique<gpufed::placement::Plan>(gpufed::placement::MakePlan(snapshot));
    state.PauseTiming();
    decisions += static_cast<int64_t>(plan->decisions.size());
    // What the plan keeps (decisions with their explanations), once the placer is gone.
    plan_bytes_per_decision = static_cast<double>(gpufed::bench::HeapBytesInUse() - before) /
                              static_cast<double>(std::max<size_t>(1, plan->decisions.size()));
    benchmark::DoNotOptimize(plan);
    plan.reset();
    state.ResumeTiming();
  }
  gpufed::bench::ReportDecisions(state, decisions, latencies);
  state.counters["bytes_per_pending"] = fleet->bytes_per_workload;
  state.counters["plan_bytes_per_decision"] = plan_bytes_per_decision;
}

void BM_PlaceFleetYamlRules(benchmark::State& state) { PlanFleet(state, false); }
void BM_PlaceFleetYamlAndLua(benchmark::State& state) { PlanFleet(state, true); }

// {clusters, pending}. 1000 x 100,000 is the scale (a few seconds each); the
// CTest smoke test skips it and runs the others once.
BENCHMARK(BM_PlaceFleetYamlRules)->Args({10, 100})->Args({1000, 200})->Args({1000, 100000})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_PlaceFleetYamlAndLua)->Args({10, 100})->Args({1000, 200})->Args({1000, 100000})->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
