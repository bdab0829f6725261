#include "controller/placement/decision_object.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gpufed::placement {
namespace {

Decision Placed() {
  Decision d;
  d.workload = "train";
  d.tenant = "lab";
  d.priority = 7;
  d.outcome = Outcome::kPlaced;
  d.reason = "best score 3.00";
  d.cost = Money(2'500'000, "EUR");
  d.binding.cluster = "eu-1";
  d.binding.nodes = {"n-0"};
  d.binding.gpus = {{0, 1}};
  ClusterVerdict chosen;
  chosen.cluster = "eu-1";
  chosen.eligible = chosen.fits_now = true;
  chosen.score.total = 3;
  chosen.cost = d.cost;
  ClusterVerdict denied;
  denied.cluster = "us-1";
  denied.rule = "pii-in-eu";
  denied.reason = "zone us";
  d.verdicts = {chosen, denied};
  return d;
}

TEST(DecisionObject, RecordsTheExchangeRatesItUsedAndOnlyThen) {
  Decision d = Placed();
  EXPECT_FALSE(DecisionObject(d).contains("exchangeRates")) << "older readers see the same object";
  d.exchange_rates.push_back({"USD", "EUR", "0.92", "2026-11-02", "ecb-reference"});
  const nlohmann::json j = DecisionObject(d);
  ASSERT_TRUE(j.contains("exchangeRates"));
  EXPECT_EQ(j["exchangeRates"], nlohmann::json::parse(R"([{"from":"USD","to":"EUR","rate":"0.92",
      "asOf":"2026-11-02","source":"ecb-reference"}])"));
  EXPECT_FALSE(DecisionObject(d, DecisionKind::kPreempt).contains("exchangeRates"));
}

TEST(DecisionObject, PlacedCarriesTargetCostAndVerdictsUnderVersionOne) {
  model::Cluster cluster;
  cluster.zone = "eu";
  cluster.region = "eu-central";
  cluster.provider = "onprem";
  nlohmann::json j = DecisionObject(Placed(), DecisionKind::kPlace, &cluster);
  EXPECT_EQ(j["decisionVersion"], kDecisionObjectVersion);
  EXPECT_EQ(j["outcome"], "placed");
  EXPECT_EQ(j["cost"], "2.50 EUR");
  EXPECT_EQ(j["target"]["cluster"], "eu-1");
  EXPECT_EQ(j["target"]["zone"], "eu");
  EXPECT_EQ(j["verdicts"][0]["fitsNow"], true);
  EXPECT_EQ(j["verdicts"][1]["rule"], "pii-in-eu");
  for (const auto& [key, value] : j.items()) {
    EXPECT_NE(std::find(DecisionObjectKeys().begin(), DecisionObjectKeys().end(), key), DecisionObjectKeys().end())
        << key;
  }
}

TEST(DecisionObject, PreemptedVictimNamesTheBindingItIsStoppedOnWithoutCost) {
  Decision d = Placed();
  d.outcome = Outcome::kQueued;
  nlohmann::json j = DecisionObject(d, DecisionKind::kPreempt);
  EXPECT_EQ(j["outcome"], "preempted");
  EXPECT_EQ(j["target"]["cluster"], "eu-1");
  EXPECT_FALSE(j["target"].contains("zone"));  // cluster unknown
  EXPECT_FALSE(j.contains("cost"));
}

TEST(DecisionObject, ReadsWhatItWritesAsTypedValues) {
  Result<StoredDecision> d = ReadDecisionObject(DecisionObject(Placed()));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->version, 1);
  EXPECT_EQ(d->outcome, "placed");
  EXPECT_EQ(d->cluster, "eu-1");
  ASSERT_EQ(d->verdicts.size(), 2u);
  EXPECT_TRUE(d->verdicts[0].fits_now);
  EXPECT_DOUBLE_EQ(d->verdicts[0].score_total, 3.0);
  EXPECT_EQ(d->verdicts[0].cost, "2.50 EUR");
  EXPECT_EQ(d->verdicts[1].rule, "pii-in-eu");
}

TEST(DecisionObject, ReadsRowsAStoreKeptBeforeVersionOne) {
  nlohmann::json v0 = {
      {"outcome", "placed"},
      {"reason", "r"},
      {"binding", {{"cluster", "old-1"}}},
      {"verdicts", {{{"cluster", "old-1"}, {"eligible", true}, {"fits_now", true}, {"score", {{"total", 1.5}}}}}}};
  Result<StoredDecision> d = ReadDecisionObject(v0);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->version, 0);
  EXPECT_EQ(d->cluster, "old-1");
  ASSERT_EQ(d->verdicts.size(), 1u);
  EXPECT_TRUE(d->verdicts[0].fits_now);
  EXPECT_DOUBLE_EQ(d->verdicts[0].score_total, 1.5);
}

TEST(DecisionObject, RefusesWhatItCannotRead) {
  EXPECT_FALSE(ReadDecisionObject(nlohmann::json::array()).ok());
  EXPECT_FALSE(ReadDecisionObject({{"decisionVersion", "one"}}).ok());
  EXPECT_FALSE(ReadDecisionObject({{"decisionVersion", kDecisionObjectVersion + 1}}).ok());
  // Fields of the wrong type read as absent, never as a crash.
  Result<StoredDecision> odd = ReadDecisionObject(
      {{"decisionVersion", 1}, {"outcome", 5}, {"target", "x"}, {"verdicts", {1, {{"score", "high"}}}}});
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->outcome, "");
  ASSERT_EQ(odd->verdicts.size(), 1u);
  EXPECT_EQ(odd->verdicts[0].score_total, 0);
}

}  // namespace
}  // namespace gpufed::placement
