#include "controller/placement/cost.h"

#include "controller/common/quantity.h"

namespace gpufed::placement {

CostEstimate EstimateCost(const model::Cluster& cluster, const model::NodePool& pool, const model::Workload& workload,
                          int64_t gpu_milli_total) {
  CostEstimate estimate;
  const model::Pricing& pricing = cluster.pricing;
  const Money* price = nullptr;
  if (workload.spot || pool.spot) {
    auto it = pricing.spot_gpu_hour.find(pool.gpu.model);
    if (it != pricing.spot_gpu_hour.end()) price = &it->second;
  }
  if (price == nullptr) {
    auto it = pricing.gpu_hour.find(pool.gpu.model);
    if (it != pricing.gpu_hour.end()) price = &it->second;
  }
  if (price != nullptr) {
    estimate.gpu = price->TimesGpuMilliHours(gpu_milli_total, workload.duration_hint.millis());
  } else {
    estimate.gpu = Money(0, pricing.currency);
    estimate.priced = gpu_milli_total == 0;
  }
  estimate.egress = Money(0, pricing.currency);
  if (!workload.data.dataset.empty() && !cluster.holds_dataset(workload.data.dataset)) {
    // size in milli-bytes -> milli-GiB, times the price per GiB.
    int64_t milli_gib = workload.data.size.milli() / kGiB;
    estimate.egress = pricing.egress_per_gib.TimesMilli(milli_gib);
    double bits = static_cast<double>(workload.data.size.milli()) / 1000.0 * 8.0;
    estimate.transfer_seconds = bits / (cluster.bandwidth_gbps * 1e9);
  }
  estimate.total = estimate.gpu.Plus(estimate.egress);
  if (estimate.total.currency().empty()) estimate.total = Money(estimate.total.micros(), pricing.currency);
  return estimate;
}

}  // namespace gpufed::placement
