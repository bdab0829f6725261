#include "controller/reconcile/fleet_view.h"

#include <algorithm>

namespace gpufed::reconcile {

std::vector<ClusterView> ViewClusters(const model::Config& config, const std::map<std::string, ClusterStatus>& status) {
  std::vector<ClusterView> out;
  for (const model::Cluster& c : config.clusters) {
    ClusterView v;
    v.name = c.metadata.name;
    v.provider = c.provider;
    v.zone = c.zone;
    v.region = c.region;
    v.max_nodes = c.elasticity.max_nodes;
    std::map<std::string, std::string> model_of;  // pool -> GPU model
    std::map<std::string, ModelGpus> models;
    std::map<std::string, int64_t> used_milli;  // by model
    for (const model::NodePool& p : c.node_pools) {
      if (p.gpu.count <= 0 || p.gpu.model.empty()) continue;
      model_of[p.name] = p.gpu.model;
      models[p.gpu.model].model = p.gpu.model;
    }
    auto it = status.find(v.name);
    if (it != status.end()) {
      const ClusterStatus& cs = it->second;
      v.healthy = cs.healthy;
      v.observed = cs.observed;
      v.errors = cs.total_errors;
      v.detached_attempts = cs.detached_attempts;
      v.last_error = cs.last_error;
      v.api_version = cs.last.api_version;
      v.api_summary = cs.last.api_summary;
      v.nodes = static_cast<int>(cs.last.nodes.size());
      v.elastic_nodes = std::max(0, v.nodes - c.present_nodes());
      for (const connectors::ObservedNode& n : cs.last.nodes) {
        auto m = model_of.find(n.pool);
        const std::string name = m == model_of.end() ? "unknown" : m->second;
        ModelGpus& g = models[name];
        g.model = name;
        for (const connectors::ObservedGpu& gpu : n.gpus) {
          ++g.capacity;
          used_milli[name] += 1000 - gpu.free_milli;
          ++v.gpus;
          v.gpus_free += gpu.free_milli == 1000 ? 1 : 0;
        }
      }
      for (const connectors::ObservedWorkload& w : cs.last.workloads)
        v.running += w.state == connectors::RunState::kRunning;
    }
    for (auto& [name, g] : models) {
      // Summed in milli-GPUs: a sum of fractions would print as 5.8469999999999995.
      g.allocated = static_cast<double>(used_milli[name]) / 1000.0;
      v.models.push_back(g);
    }
    out.push_back(std::move(v));
  }
  std::sort(out.begin(), out.end(), [](const ClusterView& a, const ClusterView& b) { return a.name < b.name; });
  return out;
}

std::vector<TenantView> ViewTenants(const model::Config& config, const std::vector<TenantBudgetStatus>& spend,
                                    const std::vector<store::StateCount>& counts,
                                    const std::map<std::string, double>& decayed_gpu_hours) {
  std::map<std::string, TenantView> by_name;
  double weights = 0;
  for (const model::Tenant& t : config.tenants) {
    TenantView& v = by_name[t.metadata.name];
    v.name = t.metadata.name;
    v.weight = t.weight;
    if (t.budget.limit) v.currency = t.budget.limit->currency();
    weights += t.weight;
  }
  for (const TenantBudgetStatus& s : spend) {
    TenantView& v = by_name[s.tenant];
    v.name = s.tenant;
    v.period = model::BudgetPeriodName(s.period);
    v.period_label = s.period_label;
    v.spent = s.spent;
    v.cloud_spent = s.cloud_spent;
    v.limit = s.limit;
    v.cloud_limit = s.cloud_limit;
    if (!s.spent.currency().empty()) v.currency = s.spent.currency();
    v.used_ratio = s.used_ratio;
    v.cloud_used_ratio = s.cloud_used_ratio;
    v.alert_at = s.alert_at;
    v.alerts = s.alerts;
    const double worst = std::max(v.used_ratio.value_or(0), v.cloud_used_ratio.value_or(0));
    double lowest_alert = 1;
    for (double level : s.alert_at) lowest_alert = std::min(lowest_alert, level);
    v.alert_level = worst >= 1 ? "critical" : worst >= lowest_alert && !s.alert_at.empty() ? "warning" : "ok";
  }
  for (const store::StateCount& c : counts) {
    TenantView& v = by_name[c.tenant];
    v.name = c.tenant;
    if (store::IsWaiting(c.state)) {
      v.queued += c.workloads;
      if (!v.oldest_submitted || c.oldest_submitted < *v.oldest_submitted) v.oldest_submitted = c.oldest_submitted;
    }
    if (store::IsActive(c.state)) v.gpus_in_use += static_cast<double>(c.gpu_milli) / 1000.0;
  }
  double usage = 0;
  for (const auto& [tenant, hours] : decayed_gpu_hours) usage += hours;
  std::vector<TenantView> out;
  for (auto& [name, v] : by_name) {
    v.entitled_share = weights > 0 ? v.weight / weights : 0;
    auto h = decayed_gpu_hours.find(name);
    v.usage_gpu_hours = h == decayed_gpu_hours.end() ? 0 : h->second;
    v.usage_share = usage > 0 ? v.usage_gpu_hours / usage : 0;
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace gpufed::reconcile
