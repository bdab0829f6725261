// What the controller pays per decision to make its audit record, before any append:
// the spec hash of the workload and the decision payload (records.h), over the
// quickstart's real plan (31 decisions, three clusters' verdicts each). And the spec hash
// alone (taken on every submission and decision), from the document's text written
// directly (workload_text.h) beside the nlohmann document it replaced.
#include <benchmark/benchmark.h>

#include "controller/audit/inputs.h"
#include "controller/audit/record.h"
#include "controller/audit/records.h"
#include "controller/audit/workload_text.h"
#include "controller/common/sha256.h"
#include "controller/config/loader.h"
#include "policies/engine/validation.h"

namespace gpufed::audit {
namespace {

config::LoadResult Quickstart() {
  return config::LoadRepository({std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart"},
                                policy::ProductLoadOptions(nullptr));
}

void BM_WorkloadSpecHash(benchmark::State& state) {
  config::LoadResult repo = Quickstart();
  if (!repo.ok() || repo.config.workloads.empty()) {
    state.SkipWithError("examples/quickstart does not load");
    return;
  }
  const bool via_document = state.range(0) != 0;
  for (auto _ : state) {
    for (const model::Workload& w : repo.config.workloads) {
      std::string hash = via_document ? "sha256:" + Sha256Hex(DumpPayload(WorkloadDocument(w))) : WorkloadSpecHash(w);
      benchmark::DoNotOptimize(hash);
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * repo.config.workloads.size()));
  state.SetLabel(via_document ? "via the nlohmann document (before)" : "text written directly");
}
BENCHMARK(BM_WorkloadSpecHash)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_AuditPlanRecords(benchmark::State& state) {
  config::LoadResult repo = Quickstart();
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
