#pragma once
// Projected cost of running a workload on a cluster: GPU-hours at the cluster's price
// for the model (spot price when the workload accepts spot) plus egress of a dataset
// the cluster does not hold. Exact money arithmetic; no floating point.
#include <string>

#include "controller/common/money.h"
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

// The price of one GPU-hour of `pool` on `cluster` (the spot price when the workload or
// pool is spot and the cluster quotes one); null when the cluster does not price the model.
const Money* GpuHourPrice(const model::Cluster& cluster, const model::NodePool& pool, bool spot);

// EstimateCost with the price already looked up (null: unpriced).
CostEstimate EstimateCostAt(const model::Cluster& cluster, const Money* gpu_hour_price,
                            const model::Workload& workload, int64_t gpu_milli_total);

// The GPU part of EstimateCostMicros from a price already read (null: unpriced); the whole
// cost when the workload moves no data to the cluster.
int64_t GpuCostMicros(const Money* gpu_hour_price, const model::Workload& workload, int64_t gpu_milli_total);

// EstimateCostAt(...).total.micros(), without building Money values (the placer's hot loop).
int64_t EstimateCostMicros(const model::Cluster& cluster, const Money* gpu_hour_price, const model::Workload& workload,
                           int64_t gpu_milli_total);

// `gpu_milli_total`: the GPU share taken (8000 for eight GPUs, 250 for a quarter).
CostEstimate EstimateCost(const model::Cluster& cluster, const model::NodePool& pool, const model::Workload& workload,
                          int64_t gpu_milli_total);

}  // namespace gpufed::placement
