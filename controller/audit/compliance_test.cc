#include "controller/audit/compliance.h"

#include <gtest/gtest.h>

namespace gpufed::audit {
namespace {

nlohmann::json Placed(const nlohmann::json& data, const nlohmann::json& target) {
  return {{"kind", "decision"},
          {"outcome", "placed"},
          {"data", data},
          {"target", target},
          {"verdicts", {{{"cluster", target.value("cluster", "")}, {"eligible", true}}}}};
}

const nlohmann::json kMunich = {{"cluster", "munich-dgx"}, {"zone", "eu"}, {"region", "eu-central"}, {"provider", "onprem"}};
const nlohmann::json kUsCloud = {{"cluster", "us-cloud"}, {"zone", "us"}, {"region", "us-east"}, {"provider", "aws"}};
const nlohmann::json kEuCloud = {{"cluster", "eu-cloud"}, {"zone", "eu"}, {"region", "eu-west"}, {"provider", "gcp"}};

TEST(Compliance, PlacementsThatKeepTheirDataWhereItMayBeAreOk) {
  ComplianceRules rules;
  EXPECT_TRUE(CheckPlacement(Placed({{"sensitivity", "restricted"}, {"pii", true}, {"residency", {"eu"}}}, kMunich), rules).ok);
  EXPECT_TRUE(CheckPlacement(Placed({{"sensitivity", "internal"}, {"pii", true}, {"residency", nlohmann::json::array()}}, kEuCloud), rules).ok);
  EXPECT_TRUE(CheckPlacement(Placed({{"sensitivity", "internal"}, {"pii", false}}, kUsCloud), rules).ok);
  // Not a placement: nothing ran anywhere.
  nlohmann::json queued = Placed({{"residency", {"eu"}}}, kUsCloud);
  queued["outcome"] = "queued";
  EXPECT_TRUE(CheckPlacement(queued, rules).ok);
}

TEST(Compliance, ResidencyOutsideItsZonesIsAViolationNamingWhereItRan) {
  ComplianceVerdict v = CheckPlacement(Placed({{"sensitivity", "internal"}, {"residency", {"eu", "ch"}}}, kUsCloud), {});
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.rule, "data-residency");
  EXPECT_EQ(v.detail, "data must stay in eu, ch; ran on us-cloud (provider aws, zone us, region us-east)");
}

TEST(Compliance, RestrictedDataOffPremisesIsAViolation) {
  ComplianceVerdict v = CheckPlacement(Placed({{"sensitivity", "restricted"}}, kEuCloud), {});
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.rule, "restricted-only-onprem");
  EXPECT_NE(v.detail.find("ran on eu-cloud (provider gcp"), std::string::npos) << v.detail;
}

TEST(Compliance, PiiOutsideThePiiZonesIsAViolationUnlessNotChecked) {
  nlohmann::json pii_in_us = Placed({{"sensitivity", "internal"}, {"pii", true}}, kUsCloud);
  ComplianceVerdict v = CheckPlacement(pii_in_us, {});
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.rule, "pii-zones");
  ComplianceRules anywhere;
  anywhere.pii_zones.clear();
  EXPECT_TRUE(CheckPlacement(pii_in_us, anywhere).ok);
  ComplianceRules us_ok;
  us_ok.pii_zones = {"eu", "us"};
  EXPECT_TRUE(CheckPlacement(pii_in_us, us_ok).ok);
}

TEST(Compliance, APlacementItsOwnVerdictRejectedIsAViolation) {
  nlohmann::json r = Placed({{"residency", {"eu"}}}, kEuCloud);
  r["verdicts"] = {{{"cluster", "eu-cloud"}, {"eligible", false}, {"rule", "pii-in-eu"}, {"reason", "zone"}}};
  ComplianceVerdict v = CheckPlacement(r, {});
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.rule, "verdict");
  EXPECT_NE(v.detail.find("pii-in-eu"), std::string::npos) << v.detail;
}

TEST(Compliance, WrongTypedMembersDoNotThrow) {
  nlohmann::json r = {{"kind", "decision"}, {"outcome", "placed"}, {"data", 7}, {"target", "x"}, {"verdicts", {1, "a"}}};
  EXPECT_TRUE(CheckPlacement(r, {}).ok);
  r["data"] = {{"residency", {1, "eu"}}, {"pii", "yes"}, {"sensitivity", 3}};
  EXPECT_EQ(CheckPlacement(r, {}).rule, "data-residency");  // zone unknown: not in eu
}

}  // namespace
}  // namespace gpufed::audit
