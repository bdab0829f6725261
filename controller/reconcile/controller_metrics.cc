// Controller::Metrics: the Prometheus exposition of /metrics. Every gauge has a sample
// for every cluster, tenant or state the active revision declares, at zero when there is
// nothing to count, so a dashboard or alert never sees a series vanish.
#include "controller/common/metrics_text.h"
#include "controller/reconcile/controller.h"
#include "controller/reconcile/fleet_view.h"

namespace gpufed::reconcile {
namespace {

using T = MetricsText::Type;

constexpr store::WorkloadState kStates[] = {store::WorkloadState::kPending,   store::WorkloadState::kQueued,
                                            store::WorkloadState::kPlaced,    store::WorkloadState::kRunning,
                                            store::WorkloadState::kSucceeded, store::WorkloadState::kFailed,
                                            store::WorkloadState::kPreempted, store::WorkloadState::kRequeued,
                                            store::WorkloadState::kRejected,  store::WorkloadState::kCancelled};

void WriteClusters(MetricsText& m, const std::vector<ClusterView>& clusters,
                   const std::map<std::pair<std::string, std::string>, int64_t>& refusals) {
  m.Family("gpufed_cluster_gpus_allocated", T::kGauge,
           "GPUs in use on a cluster's reported nodes, by GPU model (shares and MIG slices count their fraction).");
  for (const ClusterView& c : clusters) {
    for (const ModelGpus& g : c.models) m.Sample({{"cluster", c.name}, {"model", g.model}}, g.allocated);
  }
  m.Family("gpufed_cluster_gpus_capacity", T::kGauge, "GPUs on a cluster's reported nodes, by GPU model.");
  for (const ClusterView& c : clusters) {
    for (const ModelGpus& g : c.models) m.Sample({{"cluster", c.name}, {"model", g.model}}, g.capacity);
  }
  m.Family("gpufed_cluster_healthy", T::kGauge,
           "1 while the cluster answers its connector and reports healthy; 0 once it has failed for longer than its "
           "spec.health.unhealthyAfter (or was never observed).");
  for (const ClusterView& c : clusters) m.Sample({{"cluster", c.name}}, c.healthy ? 1 : 0);
  m.Family("gpufed_cluster_detached_attempts", T::kGauge,
           "Attempts given up on a cluster that did not answer for its spec.health.lostAfter (their workloads moved "
           "on) whose end the cluster has not confirmed yet: cancelled and metered when it answers again.");
  for (const ClusterView& c : clusters) m.Sample({{"cluster", c.name}}, c.detached_attempts);
  m.Family("gpufed_cluster_nodes", T::kGauge, "Nodes a cluster reported in its last observation.");
  for (const ClusterView& c : clusters) m.Sample({{"cluster", c.name}}, c.nodes);
  m.Family("gpufed_cluster_elastic_nodes", T::kGauge,
           "Nodes a cluster reported beyond its declared node pools (provisioned elastically).");
  for (const ClusterView& c : clusters) m.Sample({{"cluster", c.name}}, c.elastic_nodes);
  m.Family("gpufed_cluster_api_info", T::kGauge,
           "The remote API version a cluster's connector speaks (1 per cluster).");
  for (const ClusterView& c : clusters) {
    if (!c.api_version.empty()) m.Sample({{"cluster", c.name}, {"api_version", c.api_version}}, 1);
  }
  m.Family("gpufed_connector_errors_total", T::kCounter, "Failed connector calls (observe and act), by cluster.");
  for (const ClusterView& c : clusters) m.Sample({{"cluster", c.name}}, static_cast<double>(c.errors));
  // The snapshot holds exactly what runs, so every refusal is an anomaly.
  m.Family("gpufed_connector_refusals_total", T::kCounter,
           "Placements a cluster refused, by reason (capacity: GPUs busy; invalid: the action could never apply).");
  for (const ClusterView& c : clusters) {
    for (const char* reason : {"capacity", "invalid"}) {
      auto it = refusals.find({c.name, reason});
      m.Sample({{"cluster", c.name}, {"reason", reason}}, it == refusals.end() ? 0 : static_cast<double>(it->second));
    }
  }
}

void WriteTenants(MetricsText& m, const std::vector<TenantView>& tenants, Duration now) {
  m.Family("gpufed_queue_depth", T::kGauge,
           "Workloads waiting for placement (pending, queued or requeued), by tenant.");
  for (const TenantView& t : tenants) m.Sample({{"tenant", t.name}}, static_cast<double>(t.queued));
  m.Family("gpufed_queue_oldest_wait_seconds", T::kGauge,
           "How long the tenant's longest-waiting workload has waited (controller time); 0 with nothing waiting.");
  for (const TenantView& t : tenants) {
    const double waited =
        t.oldest_submitted ? std::max<double>(0, (now.millis() - t.oldest_submitted->millis()) / 1000.0) : 0;
    m.Sample({{"tenant", t.name}}, waited);
  }
  m.Family("gpufed_tenant_gpus_in_use", T::kGauge, "GPUs the tenant's placed and running workloads hold.");
  for (const TenantView& t : tenants) m.Sample({{"tenant", t.name}}, t.gpus_in_use);
  m.Family("gpufed_tenant_budget_used_ratio", T::kGauge,
           "Spend this budget period (metered plus running estimates) over the limit; scope all: the limit, cloud: "
           "the cloudLimit. Only tenants with that limit.");
  for (const TenantView& t : tenants) {
    if (t.used_ratio) m.Sample({{"tenant", t.name}, {"scope", "all"}}, *t.used_ratio);
    if (t.cloud_used_ratio) m.Sample({{"tenant", t.name}, {"scope", "cloud"}}, *t.cloud_used_ratio);
  }
  m.Family("gpufed_tenant_fair_share_usage_ratio", T::kGauge,
           "The tenant's share of every tenant's decayed GPU-hours (what fair share orders the queue by).");
  for (const TenantView& t : tenants) m.Sample({{"tenant", t.name}}, t.usage_share);
}

void WriteStore(MetricsText& m, const store::CommitStats::Snapshot& s) {
  m.Family("gpufed_store_commit_duration_seconds", T::kHistogram,
           "Wall time of the store's commits (an fsync each), by writer: api = a group of API submissions, loop = "
           "the reconcile loop's writes.");
  m.Observations({{"writer", "api"}}, s.api_commit_seconds);
  m.Observations({{"writer", "loop"}}, s.loop_commit_seconds);
  m.Family("gpufed_api_submission_group_size", T::kHistogram,
           "API submissions committed together in one store transaction (group commit).");
  m.Observations({}, s.group_size);
  m.Family("gpufed_api_submission_store_wait_seconds", T::kHistogram,
           "How long an API submission waited in the store, from queueing for a group commit to that commit: the "
           "durable part of a 201's latency.");
  m.Observations({}, s.submit_wait_seconds);
}

}  // namespace

std::string Controller::Metrics() {
  if (!mu_.TryLock()) {
    // A pass holds the controller (a long one can take longer than a scrape's timeout):
    // answer with the text rendered last, and have the pass render a fresh one as it ends.
    metrics_wanted_ = true;
    {
      MutexLock cached(metrics_cache_mu_);
      if (!metrics_cache_.empty()) return metrics_cache_;
    }
    mu_.Lock();  // nothing rendered yet: wait for this once
  }
  MutexLock lock(mu_, std::adopt_lock);
  std::string text = RenderMetricsLocked();
  MutexLock cached(metrics_cache_mu_);
  metrics_cache_ = text;
  return text;
}

std::string Controller::RenderMetricsLocked() {
  const model::Config& config = activator_->active()->config;
  const Duration now = clock_->Now();
  MetricsText m;
  // Counted by SQLite: a scrape does not read the finished history row by row.
  Result<std::vector<store::StateCount>> counts = store_->CountByState();
  std::map<std::string, double> by_state;
  std::map<std::pair<std::string, std::string>, Money> metered;  // (tenant, currency)
  for (store::WorkloadState s : kStates) by_state[store::StateName(s)] = 0;
  if (counts.ok()) {
    for (const store::StateCount& c : *counts) {
      by_state[store::StateName(c.state)] += static_cast<double>(c.workloads);
      if (!c.cost.currency().empty()) {
        Money& sum = metered[{c.tenant, c.cost.currency()}];
        sum = Money(Money::SaturatingAdd(sum.micros(), c.cost.micros()), c.cost.currency());  // keyed by currency
      }
    }
  }
  m.Family("gpufed_workloads", T::kGauge, "Workloads in the store by state (finished ones included).");
  for (const auto& [state, n] : by_state) m.Sample({{"state", state}}, n);
  WriteClusters(m, ViewClusters(config, reconciler_->clusters()), reconciler_->refusals());
  Result<std::vector<TenantView>> tenants = TenantViewsLocked();
  if (tenants.ok()) WriteTenants(m, *tenants, now);
  m.Family("gpufed_cost_total", T::kCounter,
           "Metered spend of finished attempts by tenant, in units of the currency (not estimates).");
  for (const auto& [key, money] : metered) {
    m.Sample({{"tenant", key.first}, {"currency", key.second}},
             static_cast<double>(money.micros()) / Money::kMicrosPerUnit);
  }
  std::vector<std::string> tenant_names;
  tenant_names.reserve(config.tenants.size());
  for (const model::Tenant& t : config.tenants) tenant_names.push_back(t.metadata.name);
  pass_metrics_.Write(m, tenant_names);
  m.Family("gpufed_build_info", T::kGauge, "The running gpufed binary (1, labelled with what it is).");
  m.Sample({{"version", options_.build.version},
            {"commit", options_.build.commit},
            {"build_type", options_.build.build_type},
            {"allocator", options_.build.allocator}},
           1);
  m.Family("gpufed_policy_revision_info", T::kGauge, "The active policy revision (1, labelled with its hash).");
  m.Sample({{"revision", config.revision}}, 1);
  m.Family("gpufed_audit_journal_head_sequence", T::kGauge, "Sequence number of the audit journal's durable head.");
  m.Sample(static_cast<double>(journal_->last_seq()));
  m.Family("gpufed_audit_journal_checkpoint_sequence", T::kGauge,
           "Sequence number of the newest signed checkpoint (0: none since the journal was opened).");
  m.Sample(static_cast<double>(journal_->last_checkpoint().seq));
  m.Family("gpufed_audit_journal_healthy", T::kGauge, "1 while the audit journal can be written (placement needs it).");
  m.Sample(journal_log_->health().ok() ? 1 : 0);
  WriteStore(m, store_->commit_stats());
  m.Raw(policy_health_.Metrics());
  if (shipping_ != nullptr) m.Raw(shipping_->Metrics());
  if (witnessing_ != nullptr) m.Raw(witnessing_->Metrics());
  if (more_metrics_) m.Raw(more_metrics_());
  return m.str();
}

}  // namespace gpufed::reconcile
