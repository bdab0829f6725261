// What the controller pays per decision to make its audit record, before any append:
// the spec hash of the workload and the decision payload (records.h), over the
// quickstart's real plan (31 decisions, three clusters' verdicts each).
#include <benchmark/benchmark.h>

#include "controller/audit/records.h"
#include "controller/config/loader.h"
#include "policies/engine/validation.h"

namespace gpufed::audit {
namespace {

void BM_AuditPlanRecords(benchmark::State& state) {
  config::LoadResult repo = config::LoadRepository({std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart"},
                                                   policy::ProductLoadOptions(nullptr));
  if (!repo.ok()) {
    state.SkipWithError("examples/quickstart does not load");
    return;
  }
  placement::Snapshot snapshot;
  snapshot.config = &repo.config;
  for (const model::Workload& w : repo.config.workloads) snapshot.pending.push_back(&w);
  const placement::Plan plan = placement::MakePlan(snapshot);
  for (auto _ : state) {
    std::vector<AuditRecord> records = PlanRecords(plan, snapshot, "sha256:inputs");
    benchmark::DoNotOptimize(records);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * plan.decisions.size()));
}
BENCHMARK(BM_AuditPlanRecords)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpufed::audit
