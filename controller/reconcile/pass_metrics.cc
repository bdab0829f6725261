#include "controller/reconcile/pass_metrics.h"

#include "controller/common/qualified_name.h"

namespace gpufed::reconcile {
namespace {

// Placer time per decision: tens of microseconds on small passes, up to a second when a
// pass is pathological.
const std::vector<double> kDecisionBounds = {0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                             0.0025,  0.005,    0.01,    0.025,  0.05,    0.1,    1};
const std::vector<double> kPassBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
// Queue waits: seconds for interactive work to a day for a budget-bound tenant.
const std::vector<double> kWaitBounds = {1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400};

}  // namespace

std::string DecisionRuleLabel(const placement::Decision& d, const DecisionContext& ctx) {
  if (ctx.kind == placement::DecisionKind::kPreempt) return "preemption";
  if (d.outcome == placement::Outcome::kPlaced) return "none";
  if (d.outcome == placement::Outcome::kRejected && !d.denied_by.empty()) return d.denied_by.front();
  for (const placement::ClusterVerdict& v : d.verdicts) {
    if (v.eligible) return "capacity";
  }
  for (const placement::ClusterVerdict& v : d.verdicts) {
    if (!v.rule.empty()) return v.rule;
  }
  for (const placement::VerdictGroup& g : d.verdict_groups) {
    if (!g.rule.empty()) return g.rule;
  }
  // Held before any cluster was considered (the tenant's quota or maxGpus).
  if (d.verdicts.empty() && d.verdict_groups.empty()) return "admission";
  return "none";
}

PassMetrics::PassMetrics() : decision_seconds_(kDecisionBounds), pass_seconds_(kPassBounds) {}

const std::vector<double>& PassMetrics::WaitBounds() { return kWaitBounds; }

void PassMetrics::OnDecision(const placement::Decision& d, const DecisionContext& ctx, std::optional<Duration> waited) {
  const std::string outcome = placement::DecisionOutcomeName(d, ctx.kind);
  ++decisions_[{outcome, DecisionRuleLabel(d, ctx)}];
  if (ctx.kind == placement::DecisionKind::kPreempt) ++preemptions_[d.tenant];
  if (waited && d.outcome == placement::Outcome::kPlaced && ctx.kind != placement::DecisionKind::kPreempt) {
    waits_.try_emplace(d.tenant, kWaitBounds).first->second.Observe(std::max<double>(0, waited->seconds()));
  }
}

void PassMetrics::OnPass(double seconds, const std::vector<double>& decision_seconds) {
  pass_seconds_.Observe(seconds);
  for (double s : decision_seconds) decision_seconds_.Observe(s);
}

std::vector<std::string> PassMetrics::WaitTenants() const {
  std::vector<std::string> out;
  out.reserve(waits_.size());
  for (const auto& entry : waits_) out.push_back(entry.first);
  return out;
}

Histogram PassMetrics::Waits(const std::string& tenant) const {
  Histogram out(kWaitBounds);
  for (const auto& [t, h] : waits_) {
    if (!tenant.empty() && t != tenant) continue;
    out.Add(h);
  }
  return out;
}

void PassMetrics::Write(MetricsText& m, const std::vector<std::string>& tenants) const {
  using T = MetricsText::Type;
  m.Family("gpufed_decisions_total", T::kCounter,
           "Placement decisions recorded in the audit journal, by outcome and by the rule that decided (none: placed; "
           "capacity: queued while an eligible cluster lacked room).");
  for (const char* outcome : {"placed", "queued", "rejected", "preempted"}) {
    bool any = false;
    for (const auto& [key, n] : decisions_) {
      if (key.first != outcome) continue;
      m.Sample({{"outcome", key.first}, {"rule", key.second}}, static_cast<double>(n));
      any = true;
    }
    if (!any) m.Sample({{"outcome", outcome}, {"rule", "none"}}, 0);
  }
  m.Family("gpufed_decision_latency_seconds", T::kHistogram,
           "Placer time per placement decision: from the previous decision (or the plan's start) to this one.");
  m.Observations({}, decision_seconds_);
  m.Family("gpufed_reconcile_pass_duration_seconds", T::kHistogram,
           "Wall time of a reconcile pass: observe, sync, snapshot, plan, journal and act.");
  m.Observations({}, pass_seconds_);
  m.Family("gpufed_queue_wait_seconds", T::kHistogram,
           "Controller time from a workload's submission to its placement, by tenant.");
  const Histogram empty(kWaitBounds);
  std::map<std::string, const Histogram*> waits;
  for (const std::string& t : tenants) waits[t] = &empty;
  for (const auto& [t, h] : waits_) waits[t] = &h;
  for (const auto& [t, h] : waits) m.Observations({{"tenant", t}}, *h);
  m.Family("gpufed_preemptions_total", T::kCounter, "Running workloads stopped to make room, by the victim's tenant.");
  std::map<std::string, int64_t> preemptions;
  for (const std::string& t : tenants) preemptions[t] = 0;
  for (const auto& [t, n] : preemptions_) preemptions[t] = n;
  for (const auto& [t, n] : preemptions) m.Sample({{"tenant", t}}, static_cast<double>(n));
  m.Family("gpufed_policy_revisions_rejected_total", T::kCounter,
           "Policy revisions that failed validation, compilation or their tests (the last good one kept serving).");
  m.Sample(static_cast<double>(revisions_rejected_));
}

Status MetricsDecisionLog::BeginPass(const placement::Plan&, const placement::Snapshot& snapshot) {
  submitted_.clear();
  for (const model::Workload* w : snapshot.pending)
    submitted_[QualifiedName(w->tenant, w->metadata.name)] = w->submitted_at;
  return Status::Ok();
}

Status MetricsDecisionLog::Record(const placement::Decision& d, const DecisionContext& ctx) {
  std::optional<Duration> waited;
  auto it = submitted_.find(QualifiedName(d.tenant, d.workload));
  if (it != submitted_.end()) waited = Duration::FromMillis(ctx.at.millis() - it->second.millis());
  metrics_->OnDecision(d, ctx, waited);
  return Status::Ok();
}

}  // namespace gpufed::reconcile
