// Placement throughput on a large federation: C clusters x 10 nodes x 8 GPUs and P
// pending workloads of a realistic mix (mostly single GPUs, fractions on MIG and shared
// pools, 8-GPU NVLink gangs, a few multi-node gangs; public to restricted data), under
// the standard library's data-sensitivity and compliance-zones policies: YAML rules
// only, and YAML rules plus their Lua hooks, side by side. Reports decisions per second
// on one core, p50/p99 per decision (timed between decisions through the snapshot's
// on_decision observer) and the memory each pending workload takes.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "controller/config/loader.h"
#include "controller/placement/plan.h"
#include "policies/engine/hook_set.h"

namespace {

using gpufed::Quantity;
namespace model = gpufed::model;

constexpr const char* kPolicies = R"(
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: sensitivity}
spec: {import: stdlib/data-sensitivity}
---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: zones}
spec: {import: stdlib/compliance-zones}
)";

model::Cluster MakeCluster(int index, std::mt19937& rng) {
  model::Cluster c;
  c.metadata.name = "cluster-" + std::to_string(index);
  const char* providers[] = {"onprem", "aws", "azure", "ionos", "gcp"};
  c.provider = providers[index % 5];
  c.zone = index % 3 == 0 ? "us" : "eu";
  c.attributes.encryption_at_rest = index % 4 != 0;
  c.attributes.certifications = {"iso27001"};
  model::NodePool pool;
  pool.name = "p";
  pool.count = 10;
  pool.cpu = Quantity::FromUnits(128);
  pool.memory = Quantity::FromUnits(int64_t{1} << 40);
  const int kind = static_cast<int>(rng() % 4);
  pool.gpu = {kind == 3 ? "H100-80GB" : "A100-80GB", 8, Quantity::FromUnits(int64_t{80} << 30), true,
              kind == 1 ? model::GpuSharing::kMig : kind == 2 ? model::GpuSharing::kMemory : model::GpuSharing::kNone,
              {}};
  if (kind == 1) pool.gpu.mig_profiles = {"1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"};
  c.node_pools = {pool};
  c.pricing.currency = "EUR";
  c.pricing.gpu_hour[pool.gpu.model] = gpufed::Money(1000000 + static_cast<int64_t>(rng() % 3000000), "EUR");
  c.pricing.egress_per_gib = gpufed::Money(50000, "EUR");
  return c;
}

model::Workload MakeWorkload(int index, std::mt19937& rng) {
  model::Workload w;
  w.metadata.name = "w-" + std::to_string(index);
  w.tenant = "tenant-" + std::to_string(rng() % 10);
  w.priority = 500;
  w.has_priority = true;
  const int shape = static_cast<int>(rng() % 100);
  if (shape < 55) {
    w.resources.gpus = 1;
  } else if (shape < 75) {
    w.resources.gpus = 1;
    w.resources.gpu_memory = Quantity::FromUnits(int64_t{2 + static_cast<int>(rng() % 15)} << 30);
    w.type = model::WorkloadType::kInference;
  } else if (shape < 88) {
    w.resources.gpus = 2 + static_cast<int>(rng() % 3);
  } else if (shape < 98) {
    w.resources.gpus = 8;
    w.resources.topology = model::Topology::kSameNode;
    w.type = model::WorkloadType::kTraining;
  } else {
    w.resources.nodes = 2;
    w.resources.gpus_per_node = 8;
    w.type = model::WorkloadType::kTraining;
  }
  const model::Sensitivity levels[] = {model::Sensitivity::kPublic, model::Sensitivity::kInternal,
                                       model::Sensitivity::kConfidential, model::Sensitivity::kRestricted};
  w.data.sensitivity = levels[rng() % 10 < 7 ? rng() % 2 : 2 + rng() % 2];
  w.data.pii = rng() % 10 == 0;
  w.duration_hint = gpufed::Duration::FromSeconds(600 + static_cast<int64_t>(rng() % 36000));
  return w;
}

struct Fleet {
  model::Config config;
  std::vector<model::Workload> workloads;
  std::unique_ptr<gpufed::policy::HookSet> hooks;
  double bytes_per_workload = 0;
};

std::unique_ptr<Fleet> BuildFleet(int clusters, int pending) {
  auto fleet = std::make_unique<Fleet>();
  gpufed::config::LoadResult policies = gpufed::config::LoadText(kPolicies, "bench-policies.yaml");
  fleet->config = std::move(policies.config);
  std::mt19937 rng(42);
  for (int i = 0; i < clusters; ++i) fleet->config.clusters.push_back(MakeCluster(i, rng));
  for (int t = 0; t < 10; ++t) {
    model::Tenant tenant;
    tenant.metadata.name = "tenant-" + std::to_string(t);
    fleet->config.tenants.push_back(tenant);
  }
  // Heap in use before and after building the workloads (malloc_trim first, so freed
  // memory of earlier benchmarks is not reused and hidden from the delta).
  malloc_trim(0);
  // uordblks misses blocks malloc maps directly (large vectors): count hblkhd too.
  const size_t before = mallinfo2().uordblks + mallinfo2().hblkhd;
  fleet->workloads.reserve(pending);
  for (int i = 0; i < pending; ++i) fleet->workloads.push_back(MakeWorkload(i, rng));
  fleet->bytes_per_workload =
      static_cast<double>(mallinfo2().uordblks + mallinfo2().hblkhd - before) / std::max(1, pending) + sizeof(const model::Workload*);
  auto hooks = gpufed::policy::HookSet::Compile(fleet->config);
  if (hooks.ok()) fleet->hooks = std::move(*hooks);
  return fleet;
}

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
    malloc_trim(0);
    const size_t before = mallinfo2().uordblks + mallinfo2().hblkhd;
    state.ResumeTiming();
    last = std::chrono::steady_clock::now();
    auto plan = std::make_unique<gpufed::placement::Plan>(gpufed::placement::MakePlan(snapshot));
    state.PauseTiming();
    decisions += static_cast<int64_t>(plan->decisions.size());
    // What the plan keeps (decisions with their explanations), once the placer is gone.
    plan_bytes_per_decision = static_cast<double>(mallinfo2().uordblks + mallinfo2().hblkhd - before) /
                              static_cast<double>(std::max<size_t>(1, plan->decisions.size()));
    benchmark::DoNotOptimize(plan);
    plan.reset();
    state.ResumeTiming();
  }
  std::sort(latencies.begin(), latencies.end());
  auto quantile = [&](double q) { return latencies.empty() ? 0 : latencies[static_cast<size_t>(q * (latencies.size() - 1))]; };
  state.counters["decisions_per_s"] = benchmark::Counter(static_cast<double>(decisions), benchmark::Counter::kIsRate);
  state.counters["p50_us"] = quantile(0.50);
  state.counters["p99_us"] = quantile(0.99);
  state.counters["bytes_per_pending"] = fleet->bytes_per_workload;
  state.counters["plan_bytes_per_decision"] = plan_bytes_per_decision;
}

void BM_PlaceFleetYamlRules(benchmark::State& state) { PlanFleet(state, false); }
void BM_PlaceFleetYamlAndLua(benchmark::State& state) { PlanFleet(state, true); }

// {clusters, pending}. 1000 x 100,000 is the issue's scale (a few seconds each); the
// CTest smoke test skips it and runs the others once.
BENCHMARK(BM_PlaceFleetYamlRules)->Args({10, 100})->Args({1000, 200})->Args({1000, 100000})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_PlaceFleetYamlAndLua)->Args({10, 100})->Args({1000, 200})->Args({1000, 100000})->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
