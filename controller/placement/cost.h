#pragma once
// Projected cost of running a workload on a cluster: GPU-hours at the cluster's price
// for the model (the spot price on a spot pool) plus egress of a dataset
// the cluster does not hold. Exact money arithmetic; no floating point.
#include <string>

#include "controller/common/money.h"
#include "controller/common/status.h"
#include "controller/model/cluster.h"
#include "controller/model/workload.h"

namespace gpufed::placement {

struct CostEstimate {
  Money gpu;               // GPU-hours x price
  Money egress;            // dataset size x egress price, when the data must move
  Money total;
  bool priced = true;      // false when the cluster has no price for the model
  double transfer_seconds = 0;  // dataset size / link bandwidth
};

// The price of one GPU-hour of `pool` on `cluster`: the spot price when the pool is spot
// capacity and the cluster quotes one, else the on-demand price; null when the cluster
// does not price the model. A workload's `spot: true` only allows spot pools: on an
// on-demand pool it pays the on-demand price.
const Money* GpuHourPrice(const model::Cluster& cluster, const model::NodePool& pool);

// EstimateCost with the price already looked up (null: unpriced).
CostEstimate EstimateCostAt(const model::Cluster& cluster, const Money* gpu_hour_price, const model::Workload& workload,
                            int64_t gpu_milli_total);

// The micros of a GPU-hour price (0: unpriced, which costs nothing): what the placer's fit
// cache keeps, so ranking a candidate reads no price table.
inline int64_t PriceMicros(const Money* gpu_hour_price) {
  return gpu_hour_price == nullptr ? 0 : gpu_hour_price->micros();
}

// The GPU part of EstimateCostMicros from a price already read (PriceMicros); the whole
// cost when the workload moves no data to the cluster.
inline int64_t GpuCostMicros(int64_t gpu_hour_micros, const model::Workload& workload, int64_t gpu_milli_total) {
  return Money::GpuMilliHoursMicros(gpu_hour_micros, gpu_milli_total, workload.duration_hint.millis());
}

// EstimateCostAt(...).total.micros(), without building Money values (the placer's hot loop).
int64_t EstimateCostMicros(const model::Cluster& cluster, int64_t gpu_hour_micros, const model::Workload& workload,
                           int64_t gpu_milli_total);

// Whether `amount` is above `limit`; an error when they are in different currencies
// (convert first: model::CurrencyConverter). Callers fail closed on the error.
Result<bool> Exceeds(const Money& amount, const Money& limit);

// `gpu_milli_total`: the GPU share taken (8000 for eight GPUs, 250 for a quarter).
CostEstimate EstimateCost(const model::Cluster& cluster, const model::NodePool& pool, const model::Workload& workload,
                          int64_t gpu_milli_total);

}  // namespace gpufed::placement
