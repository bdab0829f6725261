// Controller: what the dashboard and the API read about the fleet, the queue, tenants,
// their history and the audit journal. Tenant callers see only their own tenant.
#include <algorithm>

#include "controller/audit/record.h"
#include "controller/common/time_text.h"
#include "controller/reconcile/controller.h"
#include "controller/reconcile/read_views.h"

namespace gpufed::reconcile {
namespace {

nlohmann::json MoneyOrNull(const std::optional<Money>& m) {
  return m ? nlohmann::json(m->AmountString()) : nlohmann::json(nullptr);
}
nlohmann::json RatioOrNull(const std::optional<double>& r) { return r ? nlohmann::json(*r) : nlohmann::json(nullptr); }

// One tenant as /v1/tenants and /v1/tenants/{name} answer: money as exact decimal
// strings in `currency`, null limits and ratios when none is declared.
nlohmann::json TenantJson(const TenantView& t) {
  return {{"name", t.name},
          {"currency", t.currency},
          {"period", t.period},
          {"currentPeriod", t.period_label},
          {"spent", t.spent.AmountString()},
          {"limit", MoneyOrNull(t.limit)},
          {"usedRatio", RatioOrNull(t.used_ratio)},
          {"cloudSpent", t.cloud_spent.AmountString()},
          {"cloudLimit", MoneyOrNull(t.cloud_limit)},
          {"cloudUsedRatio", RatioOrNull(t.cloud_used_ratio)},
          {"alertAt", t.alert_at},
          {"alerts", t.alerts},
          {"alertLevel", t.alert_level},
          {"gpusInUse", t.gpus_in_use},
          {"queued", t.queued},
          {"fairShare",
           {{"weight", t.weight},
            {"entitled", t.entitled_share},
            {"usageGpuHours", t.usage_gpu_hours},
            {"share", t.usage_share}}}};
}

}  // namespace

Result<std::vector<TenantView>> Controller::TenantViewsLocked() {
  const model::Config& config = activator_->active()->config;
  Result<std::vector<TenantBudgetStatus>> spend = budget_->Spend(config, clock_->Now());
  if (!spend.ok()) return spend.status();
  Result<std::vector<store::StateCount>> counts = store_->CountByState();
  if (!counts.ok()) return counts.status();
  std::map<std::string, double> decayed;
  for (const model::Tenant& t : config.tenants)
    decayed[t.metadata.name] = reconciler_->DecayedGpuHours(t.metadata.name);
  return ViewTenants(config, *spend, *counts, decayed);
}

nlohmann::json Controller::Clusters() {
  MutexLock lock(mu_);
  return ClustersLocked();
}

nlohmann::json Controller::ClustersLocked() {
  nlohmann::json out = nlohmann::json::array();
  for (const ClusterView& c : ViewClusters(activator_->active()->config, reconciler_->clusters())) {
    nlohmann::json models = nlohmann::json::array();
    for (const ModelGpus& g : c.models)
      models.push_back({{"model", g.model}, {"allocated", g.allocated}, {"capacity", g.capacity}});
    out.push_back({{"name", c.name},
                   {"provider", c.provider},
                   {"zone", c.zone},
                   {"region", c.region},
                   {"healthy", c.healthy},
                   {"observed", c.observed},
                   {"nodes", c.nodes},
                   {"gpus", c.gpus},
                   {"gpus_free", c.gpus_free},
                   {"running", c.running},
                   {"errors", c.errors},
                   {"last_error", c.last_error},
                   {"detached_attempts", c.detached_attempts},
                   {"api_version", c.api_version},
                   {"api", c.api_summary},
                   {"models", models},
                   {"elastic", c.max_nodes > 0 ? nlohmann::json{{"nodes", c.elastic_nodes}, {"maxNodes", c.max_nodes}}
                                               : nlohmann::json(nullptr)}});
  }
  return out;
}

Result<nlohmann::json> Controller::TenantsViewLocked() {
  Result<std::vector<TenantView>> views = TenantViewsLocked();
  if (!views.ok()) return views.status();
  nlohmann::json items = nlohmann::json::array();
  for (const TenantView& t : *views) items.push_back(TenantJson(t));
  nlohmann::json declared = nlohmann::json::array();
  for (const model::Tenant& t : activator_->active()->config.tenants) declared.push_back(t.metadata.name);
  return nlohmann::json{{"items", std::move(items)}, {"declared", std::move(declared)}};
}

Result<nlohmann::json> Controller::Tenants(const std::string& caller) {
  MutexLock lock(mu_);
  Result<nlohmann::json> all = TenantsViewLocked();
  if (!all.ok()) return all.status();
  return ScopeTenants(*all, caller);
}

Result<nlohmann::json> Controller::Tenant(const std::string& name, const std::string& caller) {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(TenantVisible(name, caller));
  Result<nlohmann::json> all = TenantsViewLocked();
  if (!all.ok()) return all.status();
  return ScopeTenant(*all, name, caller);
}

Result<nlohmann::json> Controller::QueueViewLocked(const std::vector<std::string>& histograms_of,
                                                   const std::string& items_of, size_t max_items) {
  Result<std::vector<store::WorkloadRecord>> unfinished = store_->ListUnfinished();
  if (!unfinished.ok()) return unfinished.status();
  if (max_items != SIZE_MAX) {
    const size_t listed = static_cast<size_t>(std::count_if(unfinished->begin(), unfinished->end(), [&](const auto& r) {
      return store::IsWaiting(r.state) && (items_of.empty() || r.tenant == items_of);
    }));
    if (listed > max_items) return nlohmann::json();
  }
  struct Waiting {
    const store::WorkloadRecord* record;
    int priority;
  };
  std::vector<Waiting> waiting;
  for (const store::WorkloadRecord& r : *unfinished) {
    if (!store::IsWaiting(r.state) || (!items_of.empty() && r.tenant != items_of)) continue;
    const model::Workload* spec = reconciler_->SpecOf(r);
    waiting.push_back({&r, spec ? spec->priority : 0});
  }
  // The placer's order: priority, then submission (fair share breaks ties in a pass;
  // positions are the order a caller's own work is considered in: ScopeQueue).
  std::stable_sort(waiting.begin(), waiting.end(), [](const Waiting& a, const Waiting& b) {
    if (a.priority != b.priority) return a.priority > b.priority;
    return a.record->submitted < b.record->submitted;
  });
  const Duration now = clock_->Now();
  nlohmann::json items = nlohmann::json::array();
  int position = 0;
  for (const Waiting& w : waiting) {
    const store::WorkloadRecord& r = *w.record;
    items.push_back({{"tenant", r.tenant},
                     {"name", r.name},
                     {"uid", r.uid},
                     {"state", store::StateName(r.state)},
                     {"priority", w.priority},
                     {"submitted", gpufed::FormatControllerMillis(r.submitted.millis())},
                     {"waitedSeconds", std::max<double>(0, (now.millis() - r.submitted.millis()) / 1000.0)},
                     {"reason", r.reason},
                     {"attempt", r.attempt},
                     {"position", ++position}});
  }
  nlohmann::json histograms = nlohmann::json::object();
  for (const std::string& tenant : histograms_of) histograms[tenant] = WaitHistogramJson(pass_metrics_.Waits(tenant));
  return nlohmann::json{{"items", std::move(items)}, {"waitHistograms", std::move(histograms)}};
}

Result<nlohmann::json> Controller::Queue(const std::string& caller) {
  MutexLock lock(mu_);
  // Only the caller's items are made (a tenant's poll need not render everyone's queue);
  // ScopeQueue still decides what the caller sees and numbers its positions.
  Result<nlohmann::json> all = QueueViewLocked({caller}, caller);
  if (!all.ok()) return all.status();
  return ScopeQueue(*all, caller);
}

Result<ReadViews> Controller::Views(size_t max_queue_items) {
  MutexLock lock(mu_);
  ReadViews views;
  views.now = clock_->Now();
  views.clusters = ClustersLocked();
  Result<nlohmann::json> tenants = TenantsViewLocked();
  if (!tenants.ok()) return tenants.status();
  views.tenants = std::move(tenants).value();
  // Every histogram a caller can ask for: everyone's, each declared tenant's and each
  // tenant's that waits were recorded for.
  std::vector<std::string> histograms_of = pass_metrics_.WaitTenants();
  histograms_of.emplace_back();
  for (const model::Tenant& t : activator_->active()->config.tenants) histograms_of.push_back(t.metadata.name);
  Result<nlohmann::json> queue = QueueViewLocked(histograms_of, "", max_queue_items);
  if (!queue.ok()) return queue.status();
  views.queue = std::move(queue).value();
  views.audit = AuditStatusLocked();
  return views;
}

nlohmann::json Controller::HistoryJson(const std::string& caller, std::optional<Duration> since) {
  MutexLock lock(mu_);
  return history_->ToJson(caller, since);
}

nlohmann::json Controller::AuditStatus() {
  MutexLock lock(mu_);
  return AuditStatusLocked();
}

nlohmann::json Controller::AuditStatusLocked() {
  const audit::AuditJournal::CheckpointMark mark = journal_->last_checkpoint();
  nlohmann::json checkpoint = nullptr;
  if (mark.seq > 0) {
    checkpoint = {{"seq", mark.seq},
                  {"at", gpufed::FormatTimeMicros(mark.time_micros)},
                  {"keyId", audit_ != nullptr ? audit_->key_id() : ""}};
  }
  nlohmann::json sinks = nlohmann::json::array();
  if (shipping_ != nullptr) {
    for (const audit::SinkStatus& s : shipping_->Sinks()) {
      sinks.push_back({{"name", s.name},
                       {"acknowledged", s.stats.acknowledged},
                       {"lagRecords", s.stats.lag_records},
                       {"lagSeconds", static_cast<double>(s.stats.lag_micros) / 1e6},
                       {"lagging", s.lagging},
                       {"connected", s.stats.connected},
                       {"lastError", s.stats.last_error}});
    }
  }
  const Status health = journal_log_->health();
  return {{"head", {{"seq", journal_->last_seq()}, {"hash", journal_->last_hash()}}},
          {"checkpoint", checkpoint},
          {"healthy", health.ok()},
          {"error", health.ok() ? "" : health.ToString()},
          {"sinks", sinks}};
}

}  // namespace gpufed::reconcile
