#include "bench/fleet.h"

#include <malloc.h>
#if defined(GPUFED_WITH_JEMALLOC)
#include <jemalloc/jemalloc.h>
#endif

#include <algorithm>
#include <cstdint>
#include <string>

#include "controller/config/loader.h"

namespace gpufed::bench {
namespace {

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
  c.pricing.gpu_hour[pool.gpu.model] = Money(1000000 + static_cast<int64_t>(rng() % 3000000), "EUR");
  c.pricing.egress_per_gib = Money(50000, "EUR");
  return c;
}

}  // namespace

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


size_t HeapBytesInUse() {
#if defined(GPUFED_WITH_JEMALLOC)
  // jemalloc's statistics are a snapshot refreshed by advancing its epoch.
  uint64_t epoch = 1;
  size_t size = sizeof(epoch);
  mallctl("epoch", &epoch, &size, &epoch, size);
  size_t allocated = 0;
  size = sizeof(allocated);
  return mallctl("stats.allocated", &allocated, &size, nullptr, 0) == 0 ? allocated : 0;
#else
  // Freed memory is returned first, so it is not counted; uordblks misses blocks malloc
  // maps directly (large vectors): hblkhd holds those.
  malloc_trim(0);
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#endif
}

std::unique_ptr<Fleet> BuildFleet(int clusters, int pending) {
  auto fleet = std::make_unique<Fleet>();
  config::LoadResult policies = config::LoadText(kPolicies, "bench-policies.yaml");
  fleet->config = std::move(policies.config);
  std::mt19937& rng = fleet->rng;
  for (int i = 0; i < clusters; ++i) fleet->config.clusters.push_back(MakeCluster(i, rng));
  for (int t = 0; t < 10; ++t) {
    model::Tenant tenant;
    tenant.metadata.name = "tenant-" + std::to_string(t);
    fleet->config.tenants.push_back(tenant);
  }
  // Heap in use before and after building the workloads.
  const size_t before = HeapBytesInUse();
  fleet->workloads.reserve(pending);
  for (int i = 0; i < pending; ++i) fleet->workloads.push_back(MakeWorkload(i, rng));
  fleet->bytes_per_workload =
      static_cast<double>(HeapBytesInUse() - before) / std::max(1, pending) + sizeof(const model::Workload*);
  auto hooks = policy::HookSet::Compile(fleet->config);
  if (hooks.ok()) fleet->hooks = std::move(*hooks);
  return fleet;
}

void ReportDecisions(benchmark::State& state, int64_t decisions, std::vector<double>& latencies) {
  std::sort(latencies.begin(), latencies.end());
  auto quantile = [&](double q) { return latencies.empty() ? 0 : latencies[static_cast<size_t>(q * (latencies.size() - 1))]; };
  state.counters["decisions_per_s"] = benchmark::Counter(static_cast<double>(decisions), benchmark::Counter::kIsRate);
  state.counters["p50_us"] = quantile(0.50);
  state.counters["p99_us"] = quantile(0.99);
}

}  // namespace gpufed::bench
