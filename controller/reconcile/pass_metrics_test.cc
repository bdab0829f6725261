#include "controller/reconcile/pass_metrics.h"

#include <gtest/gtest.h>

namespace gpufed::reconcile {
namespace {

placement::Decision Decided(placement::Outcome outcome, const std::string& tenant) {
  placement::Decision d;
  d.workload = "w";
  d.tenant = tenant;
  d.outcome = outcome;
  return d;
}

bool Has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST(PassMetrics, DecisionsAreCountedByOutcomeAndTheRuleThatDecided) {
  PassMetrics m;
  DecisionContext place;
  m.OnDecision(Decided(placement::Outcome::kPlaced, "alpha"), place, Duration::FromSeconds(20));
  placement::Decision denied = Decided(placement::Outcome::kRejected, "beta");
  denied.denied_by = {"eu-only", "no-spot"};
  m.OnDecision(denied, place, std::nullopt);
  placement::Decision waiting = Decided(placement::Outcome::kQueued, "beta");
  waiting.verdicts = {{"cloud", false, false, "budget-cap"}, {"onprem", true, false}};
  m.OnDecision(waiting, place, std::nullopt);
  placement::Decision excluded = Decided(placement::Outcome::kQueued, "beta");
  excluded.verdicts = {{"cloud", false, false, "budget-cap"}};
  m.OnDecision(excluded, place, std::nullopt);
  m.OnDecision(Decided(placement::Outcome::kQueued, "beta"), place, std::nullopt);  // held by the tenant's quota
  DecisionContext preempt;
  preempt.kind = placement::DecisionKind::kPreempt;
  m.OnDecision(Decided(placement::Outcome::kQueued, "gamma"), preempt, std::nullopt);

  MetricsText text;
  m.Write(text, {"alpha", "beta", "delta"});
  const std::string& s = text.str();
  EXPECT_TRUE(Has(s, "gpufed_decisions_total{outcome=\"placed\",rule=\"none\"} 1")) << s;
  EXPECT_TRUE(Has(s, "gpufed_decisions_total{outcome=\"rejected\",rule=\"eu-only\"} 1")) << s;
  EXPECT_TRUE(Has(s, "gpufed_decisions_total{outcome=\"queued\",rule=\"capacity\"} 1")) << s;
  EXPECT_TRUE(Has(s, "gpufed_decisions_total{outcome=\"queued\",rule=\"budget-cap\"} 1")) << s;
  EXPECT_TRUE(Has(s, "gpufed_decisions_total{outcome=\"queued\",rule=\"admission\"} 1")) << s;
  EXPECT_TRUE(Has(s, "gpufed_decisions_total{outcome=\"preempted\",rule=\"preemption\"} 1")) << s;
  // Preemptions by the victim's tenant; every declared tenant has a sample.
  EXPECT_TRUE(Has(s, "gpufed_preemptions_total{tenant=\"gamma\"} 1")) << s;
  EXPECT_TRUE(Has(s, "gpufed_preemptions_total{tenant=\"delta\"} 0")) << s;
  // Waits: only placements, by tenant; tenants without any have an empty histogram.
  EXPECT_TRUE(Has(s, "gpufed_queue_wait_seconds_bucket{tenant=\"alpha\",le=\"15\"} 0")) << s;
  EXPECT_TRUE(Has(s, "gpufed_queue_wait_seconds_bucket{tenant=\"alpha\",le=\"30\"} 1")) << s;
  EXPECT_TRUE(Has(s, "gpufed_queue_wait_seconds_count{tenant=\"beta\"} 0")) << s;
  EXPECT_EQ(m.Waits("alpha").count(), 1u);
  EXPECT_EQ(m.Waits("beta").count(), 0u);
  EXPECT_EQ(m.Waits("").sum(), 20);
}

TEST(PassMetrics, PassesAndEachDecisionGetTheirOwnHistograms) {
  PassMetrics m;
  m.OnPass(0.2, {0.00003, 0.0004, 0.0004});
  m.OnPass(0.002, {});
  m.OnRevisionRejected();
  MetricsText text;
  m.Write(text, {});
  const std::string& s = text.str();
  EXPECT_TRUE(Has(s, "gpufed_reconcile_pass_duration_seconds_count 2")) << s;
  EXPECT_TRUE(Has(s, "gpufed_reconcile_pass_duration_seconds_bucket{le=\"0.0025\"} 1")) << s;
  EXPECT_TRUE(Has(s, "gpufed_decision_latency_seconds_count 3")) << s;
  EXPECT_TRUE(Has(s, "gpufed_decision_latency_seconds_bucket{le=\"5e-05\"} 1")) << s;
  EXPECT_TRUE(Has(s, "gpufed_decision_latency_seconds_bucket{le=\"0.0005\"} 3")) << s;
  EXPECT_TRUE(Has(s, "gpufed_policy_revisions_rejected_total 1")) << s;
  // With no decisions yet every outcome still has a series.
  EXPECT_TRUE(Has(s, "gpufed_decisions_total{outcome=\"rejected\",rule=\"none\"} 0")) << s;
}

}  // namespace
}  // namespace gpufed::reconcile
