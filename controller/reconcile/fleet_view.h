#pragma once
// The controller's current picture of its fleet and tenants, computed once for every
// reader: /metrics, the API (/v1/clusters, /v1/tenants, /v1/queue) and the dashboard's
// history samples. Pure functions of what the controller holds; no I/O.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/model/config.h"
#include "controller/reconcile/budget_watch.h"
#include "controller/reconcile/reconciler.h"
#include "controller/store/records.h"

namespace gpufed::reconcile {

struct ModelGpus {
  std::string model;
  double allocated = 0;  // GPUs in use (shares and MIG slices count their fraction)
  int capacity = 0;      // GPUs on the nodes the cluster reported
};

struct ClusterView {
  std::string name, provider, zone, region;
  bool healthy = false;
  bool observed = false;
  int nodes = 0;          // reported by the cluster
  int elastic_nodes = 0;  // reported beyond the declared node pools
  int max_nodes = 0;      // elasticity.maxNodes; 0: fixed size
  int gpus = 0, gpus_free = 0;  // whole GPUs, and those with nothing on them
  int running = 0;
  int64_t errors = 0;
  int detached_attempts = 0;  // given up after lostAfter, not yet confirmed ended
  std::string last_error, api_version, api_summary;
  std::vector<ModelGpus> models;  // every declared pool's model, zero when not reported
};

// One view per cluster of the active revision, in name order.
std::vector<ClusterView> ViewClusters(const model::Config& config, const std::map<std::string, ClusterStatus>& status);

struct TenantView {
  std::string name;
  // Budget this period (metered plus running estimates); null limits: none declared.
  std::string currency, period, period_label;
  Money spent, cloud_spent;
  std::optional<Money> limit, cloud_limit;
  std::optional<double> used_ratio, cloud_used_ratio;
  std::vector<double> alert_at;
  nlohmann::json alerts = nlohmann::json::array();
  std::string alert_level = "ok";  // ok, warning (an alertAt level reached), critical (>= 100 %)
  double gpus_in_use = 0;          // placed and running work
  int64_t queued = 0;              // waiting for placement
  std::optional<Duration> oldest_submitted;  // the longest-waiting workload's submission
  double weight = 1;
  double entitled_share = 0;  // weight over every tenant's weight
  double usage_gpu_hours = 0; // decayed fair-share usage
  double usage_share = 0;     // of every tenant's decayed usage
};

// Every tenant of the active revision (and any other the store still counts), in name order.
std::vector<TenantView> ViewTenants(const model::Config& config, const std::vector<TenantBudgetStatus>& spend,
                                    const std::vector<store::StateCount>& counts,
                                    const std::map<std::string, double>& decayed_gpu_hours);

}  // namespace gpufed::reconcile
