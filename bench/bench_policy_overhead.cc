// Placement throughput with and without Lua policy hooks: the quickstart fleet's
// policies (YAML rules, plus the team-rules.lua admit/filter/score hooks), planning
// its 31 workloads again and again. The budget: with hooks, at least half the
// decisions per second of the same plan without them.
#include <benchmark/benchmark.h>

#include <string>

#include "bench/quickstart.h"
#include "controller/placement/plan.h"

namespace {

using gpufed::policy::Candidate;

void PlanQuickstart(benchmark::State& state, bool with_hooks) {
  const Candidate& candidate = gpufed::bench::QuickstartCandidate();
  if (!candidate.revision) {
    state.SkipWithError("examples/quickstart does not activate");
    return;
  }
  const auto& config = candidate.revision->config;
  gpufed::placement::Snapshot snapshot;
  snapshot.config = &config;
  for (const auto& w : config.workloads) snapshot.pending.push_back(&w);
  snapshot.hooks = with_hooks ? candidate.revision->hooks.get() : nullptr;
  int64_t decisions = 0;
  for (auto _ : state) {
    gpufed::placement::Plan plan = gpufed::placement::MakePlan(snapshot);
    decisions += static_cast<int64_t>(plan.decisions.size());
    benchmark::DoNotOptimize(plan);
  }
  state.SetItemsProcessed(decisions);
  state.counters["decisions_per_s"] = benchmark::Counter(static_cast<double>(decisions), benchmark::Counter::kIsRate);
}

void BM_PlanQuickstartYamlRulesOnly(benchmark::State& state) { PlanQuickstart(state, false); }
void BM_PlanQuickstartWithLuaHooks(benchmark::State& state) { PlanQuickstart(state, true); }

BENCHMARK(BM_PlanQuickstartYamlRulesOnly)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanQuickstartWithLuaHooks)->Unit(benchmark::kMicrosecond);

}  // namespace
