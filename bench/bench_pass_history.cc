// A reconcile pass as the finished history grows: 100 waiting (no room for them) and
// 1,000 running workloads on a sim federation, with 0 or 1,000,000 finished workloads
// already in the store. A pass must read only the waiting and active rows, so its cost
// should not depend on the history (the goal: at most 1.2x with a million finished rows).
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "connectors/core/registry.h"
#include "connectors/sim/sim_connector.h"
#include "controller/common/clock.h"
#include "controller/runtime/app.h"
#include "controller/store/sqlite.h"
#include "controller/store/store.h"

namespace {

using gpufed::Duration;
using gpufed::Status;

// 125 nodes x 8 GPUs: exactly room for the 1,000 running one-GPU workloads.
constexpr const char* kRepo = R"(apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: onprem}
spec:
  provider: onprem
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: dgx, count: 125, cpu: 64, memory: 512Gi, gpu: {model: A100-80GB, count: 8, memory: 80Gi}}
  pricing: {currency: EUR, gpuHour: {A100-80GB: "1.00"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: lab}
spec: {weight: 1}
)";

std::string Workload(const std::string& name) {
  return "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: " + name +
         "}\nspec:\n  tenant: lab\n  type: training\n  resources: {gpus: 1, gpuModels: [A100-80GB]}\n"
         "  durationHint: 1000h\n";
}

// `rows` finished workloads of the same tenant, written straight into the store's file
// (the triggers of the schema keep its totals, as for rows the controller writes).
Status AddFinishedHistory(const std::string& db_path, int64_t rows) {
  {
    auto store = gpufed::store::Store::Open(db_path);  // creates the schema
    if (!store.ok()) return store.status();
  }
  auto db = gpufed::store::Database::Open(db_path);
  if (!db.ok()) return db.status();
  return (*db)->Exec(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < " + std::to_string(rows) +
      ") INSERT INTO workloads(uid, name, tenant, source, submitted_ms, seq, state, cost_micros, currency, gpu_milli) "
      "SELECT 'old-' || i, 'old-' || i, 'lab', 'api', 0, i, 'Succeeded', 1000000, 'EUR', 1000 FROM n");
}

void BM_ReconcilePassWithFinishedHistory(benchmark::State& state) {
  const int64_t finished = state.range(0);
  const std::string dir = std::filesystem::temp_directory_path() /
                          ("gpufed-bench-history-" + std::to_string(::getpid()) + "-" + std::to_string(finished));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/repo");
  std::filesystem::create_directories(dir + "/state");
  std::ofstream(dir + "/repo/fleet.yaml") << kRepo;
  if (finished > 0) {
    if (Status s = AddFinishedHistory(dir + "/state/gpufed.db", finished); !s.ok()) {
      state.SkipWithError(s.ToString().c_str());
      return;
    }
  }
  gpufed::ManualClock clock;
  gpufed::connectors::ConnectorRegistry registry;
  (void)gpufed::connectors::sim::RegisterSimConnector(registry);
  gpufed::runtime::AppOptions o;
  o.config_dir = dir + "/repo";
  o.state_dir = dir + "/state";
  o.clock = &clock;
  o.handle_signals = false;
  auto app = gpufed::runtime::App::Open(o, registry, nullptr);
  if (!app.ok()) {
    state.SkipWithError(app.status().ToString().c_str());
    return;
  }
  gpufed::reconcile::Controller& c = (*app)->controller();
  bool ok = true;
  for (int i = 0; i < 1100 && ok; ++i) {
    ok = c.Submit(Workload("w" + std::to_string(i)), "bench.yaml", {"", "bench"}).ok();
    // The first 1,000 take the fleet; the last 100 find no room and wait.
    if (i == 999) {
      for (int p = 0; p < 3 && ok; ++p) {
        clock.Advance(Duration::FromSeconds(60));
        ok = c.Pass().ok();
      }
    }
  }
  for (int p = 0; p < 2 && ok; ++p) {
    clock.Advance(Duration::FromSeconds(60));
    ok = c.Pass().ok();
  }
  if (!ok) {
    state.SkipWithError("setting up the running and waiting workloads failed");
    return;
  }
  const int64_t rows_before = c.store()->rows_read();
  for (auto _ : state) {
    clock.Advance(Duration::FromSeconds(1));
    if (!c.Pass().ok()) {
      state.SkipWithError("a pass failed");
      break;
    }
  }
  state.counters["workload_rows_read_per_pass"] =
      static_cast<double>(c.store()->rows_read() - rows_before) / static_cast<double>(state.iterations());
  state.counters["finished_rows"] = static_cast<double>(finished);
  app->reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_ReconcilePassWithFinishedHistory)->Arg(0)->Arg(1000000)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
