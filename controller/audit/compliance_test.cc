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

const nlohmann::json kMunich = {
    {"cluster", "munich-dgx"}, {"zone", "eu"}, {"region", "eu-central"}, {"provider", "onprem"}};
const nlohmann::json kUsCloud = {{"cluster", "us-cloud"}, {"zone", "us"}, {"region", "us-east"}, {"provider", "aws"}};
const nlohmann::json kEuCloud = {{"cluster", "eu-cloud"}, {"zone", "eu"}, {"region", "eu-west"}, {"provider", "gcp"}};

// A revision that enforces the whole standard library: data-sensitivity and
// compliance-zones with piiZones [eu].
ComplianceRules Stdlib(std::vector<std::string> pii_zones = {"eu"}) {
  ComplianceRules rules;
  rules.revision = "r1";
  rules.restricted_onprem_policies = {"data-protection"};
  rules.zones.push_back({"zones", std::move(pii_zones), {}});
  return rules;
}

ComplianceRules Nothing() {
  ComplianceRules rules;
  rules.revision = "r0";
  return rules;
}

TEST(Compliance, PlacementsThatKeepTheirDataWhereItMayBeAreOk) {
  const Result<ComplianceRules> rules = Stdlib();
  EXPECT_TRUE(
      CheckPlacement(Placed({{"sensitivity", "restricted"}, {"pii", true}, {"residency", {"eu"}}}, kMunich), rules)
          .ok());
  EXPECT_TRUE(
      CheckPlacement(
          Placed({{"sensitivity", "internal"}, {"pii", true}, {"residency", nlohmann::json::array()}}, kEuCloud), rules)
          .ok());
  EXPECT_TRUE(CheckPlacement(Placed({{"sensitivity", "internal"}, {"pii", false}}, kUsCloud), rules).ok());
  // Not a placement: nothing ran anywhere.
  nlohmann::json queued = Placed({{"residency", {"eu"}}}, kUsCloud);
  queued["outcome"] = "queued";
  EXPECT_TRUE(CheckPlacement(queued, rules).ok());
  EXPECT_TRUE(CheckPlacement(queued, rules).checked.empty());
}

TEST(Compliance, ResidencyOutsideItsZonesIsAViolationNamingWhereItRan) {
  ComplianceVerdict v =
      CheckPlacement(Placed({{"sensitivity", "internal"}, {"residency", {"eu", "ch"}}}, kUsCloud), Nothing());
  EXPECT_TRUE(v.violation());
  EXPECT_EQ(v.rule, "data-residency");
  EXPECT_EQ(v.detail, "data must stay in eu, ch; ran on us-cloud (provider aws, zone us, region us-east)");
}

TEST(Compliance, RestrictedDataOffPremisesIsAViolationWhereTheRevisionEnforcesIt) {
  const nlohmann::json restricted = Placed({{"sensitivity", "restricted"}}, kEuCloud);
  ComplianceVerdict v = CheckPlacement(restricted, Stdlib());
  EXPECT_TRUE(v.violation());
  EXPECT_EQ(v.rule, "restricted-only-onprem");
  EXPECT_NE(v.detail.find("ran on eu-cloud (provider gcp"), std::string::npos) << v.detail;
  // A revision without stdlib/data-sensitivity does not say where restricted data goes.
  ComplianceVerdict without = CheckPlacement(restricted, Nothing());
  EXPECT_TRUE(without.ok());
  EXPECT_EQ(without.not_applicable,
            (std::vector<std::string>{"restricted-only-onprem: revision r0 enforces no stdlib/data-sensitivity"}));
}

TEST(Compliance, PiiOutsideTheRevisionsPiiZonesIsAViolation) {
  nlohmann::json pii_in_us = Placed({{"sensitivity", "internal"}, {"pii", true}}, kUsCloud);
  ComplianceVerdict v = CheckPlacement(pii_in_us, Stdlib());
  EXPECT_TRUE(v.violation());
  EXPECT_EQ(v.rule, "pii-zones");
  EXPECT_TRUE(CheckPlacement(pii_in_us, Stdlib({"eu", "us"})).ok());
  // No piiZones at all: the hook denies PII everywhere, and so does the check.
  EXPECT_TRUE(CheckPlacement(pii_in_us, Stdlib({})).violation());
  // Two compliance-zones policies: both must hold.
  ComplianceRules two = Stdlib({"eu", "us"});
  two.zones.push_back({"strict", {"eu"}, {}});
  ComplianceVerdict both = CheckPlacement(pii_in_us, two);
  EXPECT_TRUE(both.violation());
  EXPECT_NE(both.detail.find("(policy strict)"), std::string::npos) << both.detail;
  // Without the policy the check does not apply (and says why).
  ComplianceVerdict none = CheckPlacement(pii_in_us, Nothing());
  EXPECT_TRUE(none.ok());
  ASSERT_EQ(none.not_applicable.size(), 1u);
  EXPECT_EQ(none.not_applicable[0], "pii-zones: revision r0 enforces no stdlib/compliance-zones");
}

TEST(Compliance, SensitivityBoundToZonesIsCheckedAndMakesThePlacementSensitive) {
  ComplianceRules rules = Stdlib();
  rules.zones[0].by_sensitivity["confidential"] = {"eu"};
  const nlohmann::json confidential = Placed({{"sensitivity", "confidential"}, {"pii", false}}, kUsCloud);
  EXPECT_TRUE(IsSensitivePlacement(confidential, rules));
  EXPECT_FALSE(IsSensitivePlacement(confidential, Stdlib()));
  EXPECT_FALSE(IsSensitivePlacement(confidential, Result<ComplianceRules>(NotFound("gone"))));
  ComplianceVerdict v = CheckPlacement(confidential, rules);
  EXPECT_TRUE(v.violation());
  EXPECT_EQ(v.rule, "sensitivity-zones");
  EXPECT_EQ(v.detail.rfind("confidential data must stay in [eu] (policy zones); ran on us-cloud", 0), 0u) << v.detail;
}

TEST(Compliance, UnknownRulesLeaveTheVerdictUnknownUnlessACheckEveryRevisionHasFails) {
  const Result<ComplianceRules> gone = NotFound("revision r9 is not available: moved");
  ComplianceVerdict v = CheckPlacement(Placed({{"pii", true}}, kUsCloud), gone);
  EXPECT_TRUE(v.unknown());
  EXPECT_STREQ(VerdictName(v), "unknown");
  EXPECT_EQ(v.detail, "revision r9 is not available: moved");
  EXPECT_TRUE(CheckPlacement(Placed({{"residency", {"eu"}}}, kUsCloud), gone).violation());
}

TEST(Compliance, APlacementItsOwnVerdictRejectedIsAViolation) {
  nlohmann::json r = Placed({{"residency", {"eu"}}}, kEuCloud);
  r["verdicts"] = {{{"cluster", "eu-cloud"}, {"eligible", false}, {"rule", "pii-in-eu"}, {"reason", "zone"}}};
  ComplianceVerdict v = CheckPlacement(r, Nothing());
  EXPECT_TRUE(v.violation());
  EXPECT_EQ(v.rule, "verdict");
  EXPECT_NE(v.detail.find("pii-in-eu"), std::string::npos) << v.detail;
}

TEST(Compliance, WrongTypedMembersDoNotThrow) {
  nlohmann::json r = {
      {"kind", "decision"}, {"outcome", "placed"}, {"data", 7}, {"target", "x"}, {"verdicts", {1, "a"}}};
  EXPECT_TRUE(CheckPlacement(r, Stdlib()).ok());
  r["data"] = {{"residency", {1, "eu"}}, {"pii", "yes"}, {"sensitivity", 3}};
  EXPECT_EQ(CheckPlacement(r, Stdlib()).rule, "data-residency");  // zone unknown: not in eu
}

TEST(Compliance, RulesDescribeWhatTheRevisionEnforces) {
  EXPECT_EQ(Nothing().Describe(), "data-residency only");
  ComplianceRules rules = Stdlib({"ch"});
  rules.zones[0].by_sensitivity["confidential"] = {"ch", "eu"};
  EXPECT_EQ(rules.Describe(),
            "data-residency; restricted-only-onprem; pii-zones [ch]; sensitivity-zones confidential [ch, eu]");
}

}  // namespace
}  // namespace gpufed::audit
