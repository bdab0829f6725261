#pragma once
// What the loop counts for /metrics between scrapes: decisions by outcome and rule, the
// wait from submission to placement by tenant, each decision's and each pass's duration,
// preemptions by tenant, and policy revisions rejected. Decisions arrive through
// MetricsDecisionLog, teed after the journal and the store (it counts what they hold);
// passes and reloads through the Controller. Not thread-safe: the Controller's mu_
// guards it.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "controller/common/metrics_text.h"
#include "controller/reconcile/decision_log.h"

namespace gpufed::reconcile {

// The rule label of a decision: "none" when placed; the first denying rule when
// rejected; "capacity" when queued while some cluster was eligible (waiting for room),
// else the rule that excluded the first cluster; "admission" when held before any
// cluster was considered (tenant quota); "preemption" for a victim.
std::string DecisionRuleLabel(const placement::Decision& decision, const DecisionContext& ctx);

class PassMetrics {
 public:
  PassMetrics();
  // A recorded decision; `waited` is the time since submission (placements only).
  void OnDecision(const placement::Decision& decision, const DecisionContext& ctx, std::optional<Duration> waited);
  // A pass took `seconds`; the placer made its decisions in `decision_seconds` each.
  void OnPass(double seconds, const std::vector<double>& decision_seconds);
  void OnRevisionRejected() { ++revisions_rejected_; }

  // The families, with a zero sample for each tenant in `tenants` that saw nothing yet.
  void Write(MetricsText& m, const std::vector<std::string>& tenants) const;
  // Waits of `tenant`'s placements ("" : every tenant's), for the dashboard.
  Histogram Waits(const std::string& tenant) const;
  // The tenants with a wait recorded (Waits of any other is empty).
  std::vector<std::string> WaitTenants() const;
  static const std::vector<double>& WaitBounds();

 private:
  std::map<std::pair<std::string, std::string>, int64_t> decisions_;  // (outcome, rule)
  std::map<std::string, Histogram> waits_;                            // by tenant
  std::map<std::string, int64_t> preemptions_;                        // by victim tenant
  Histogram decision_seconds_;
  Histogram pass_seconds_;
  int64_t revisions_rejected_ = 0;
};

// Feeds PassMetrics from the decision log: knows each pending workload's submission
// time from the pass's snapshot (the same the placer read).
class MetricsDecisionLog : public DecisionLog {
 public:
  explicit MetricsDecisionLog(PassMetrics* metrics) : metrics_(metrics) {}  // must outlive this
  Status BeginPass(const placement::Plan& plan, const placement::Snapshot& snapshot) override;
  void EndPass() override { submitted_.clear(); }
  Status Record(const placement::Decision& decision, const DecisionContext& ctx) override;

 private:
  PassMetrics* metrics_;
  std::map<std::string, Duration> submitted_;  // by QualifiedName
};

}  // namespace gpufed::reconcile
