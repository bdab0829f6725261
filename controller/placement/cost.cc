#include "controller/placement/cost.h"

#include "controller/common/quantity.h"

namespace gpufed::placement {

const Money* GpuHourPrice(const model::Cluster& cluster, const model::NodePool& pool) {
  const model::Pricing& pricing = cluster.pricing;
  if (pool.spot) {
    auto it = pricing.spot_gpu_hour.find(pool.gpu.model);
    if (it != pricing.spot_gpu_hour.end()) return &it->second;
  }
  auto it = pricing.gpu_hour.find(pool.gpu.model);
  return it == pricing.gpu_hour.end() ? nullptr : &it->second;
}

CostEstimate EstimateCost(const model::Cluster& cluster, const model::NodePool& pool, const model::Workload& workload,
                          int64_t gpu_milli_total) {
  return EstimateCostAt(cluster, GpuHourPrice(cluster, pool), workload, gpu_milli_total);
}

namespace {

bool MovesData(const model::Cluster& cluster, const model::Workload& workload) {
  return !workload.data.dataset.empty() && !cluster.holds_dataset(workload.data.dataset);
}

// Dataset size in milli-GiB (the egress price is per GiB).
int64_t MilliGib(const model::Workload& workload) { return workload.data.size.milli() / kGiB; }

}  // namespace

CostEstimate EstimateCostAt(const model::Cluster& cluster, const Money* price, const model::Workload& workload,
                            int64_t gpu_milli_total) {
  CostEstimate estimate;
  const model::Pricing& pricing = cluster.pricing;
  if (price != nullptr) {
    estimate.gpu = price->TimesGpuMilliHours(gpu_milli_total, workload.duration_hint.millis());
  } else {
    estimate.gpu = Money(0, pricing.currency);
    estimate.priced = gpu_milli_total == 0;
  }
  estimate.egress = Money(0, pricing.currency);
  if (MovesData(cluster, workload)) {
    estimate.egress = pricing.egress_per_gib.TimesMilli(MilliGib(workload));
    double bits = static_cast<double>(workload.data.size.milli()) / 1000.0 * 8.0;
    estimate.transfer_seconds = bits / (cluster.bandwidth_gbps * 1e9);
  }
  // A cluster prices in one currency (the decoder refuses a price in another).
  estimate.total = Money(Money::SaturatingAdd(estimate.gpu.micros(), estimate.egress.micros()), pricing.currency);
  return estimate;
}

int64_t EstimateCostMicros(const model::Cluster& cluster, int64_t gpu_hour_micros, const model::Workload& workload,
                           int64_t gpu_milli_total) {
  const int64_t gpu = GpuCostMicros(gpu_hour_micros, workload, gpu_milli_total);
  if (!MovesData(cluster, workload)) return gpu;
  return Money::SaturatingAdd(gpu, cluster.pricing.egress_per_gib.TimesMilli(MilliGib(workload)).micros());
}

Result<bool> Exceeds(const Money& amount, const Money& limit) {
  Result<std::strong_ordering> order = amount.Compare(limit);
  if (!order.ok()) return order.status();
  return *order > 0;
}

}  // namespace gpufed::placement
