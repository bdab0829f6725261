#include "controller/audit/report.h"

#include <gtest/gtest.h>

#include "controller/audit/journal.h"
#include "controller/audit/testing/test_journal.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

// Rules from a map by revision, as the CLI resolves them from each recorded revision;
// a revision not in the map is not available.
ComplianceRulesFor RulesFrom(std::map<std::string, ComplianceRules> by_revision) {
  return [by_revision = std::move(by_revision)](const nlohmann::json& d) -> Result<ComplianceRules> {
    const std::string revision = d.value("revision", "");
    auto it = by_revision.find(revision);
    if (it == by_revision.end()) return NotFound("revision " + revision + " is not available: gone");
    return it->second;
  };
}

ComplianceRules PiiIn(const std::string& revision, std::vector<std::string> zones) {
  ComplianceRules rules;
  rules.revision = revision;
  rules.zones.push_back({"zones", std::move(zones), {}});
  return rules;
}

nlohmann::json PiiPlacement(const std::string& workload, const std::string& revision, const std::string& zone) {
  return {{"workload", workload},
          {"tenant", "t"},
          {"outcome", "placed"},
          {"revision", revision},
          {"cost", "1.00 EUR"},
          {"data", {{"sensitivity", "internal"}, {"pii", true}, {"residency", nlohmann::json::array()}}},
          {"target", {{"cluster", zone + "-cloud"}, {"zone", zone}, {"region", zone + "-1"}, {"provider", "gcp"}}}};
}

// A chain can be valid and its payloads still of the wrong types (forged, or from a newer
// writer): the report reads such members as absent instead of throwing.
TEST(AuditReport, WrongTypedMembersReadAsAbsent) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  {
    auto journal = testing::OpenTestJournal(*env, dir.str());
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    nlohmann::json forged = {{"workload", "w"},
                             {"tenant", "t"},
                             {"outcome", "placed"},
                             {"revision", "r"},
                             {"deniedBy", {3, "rule-a", nullptr}},
                             {"data", {{"pii", "yes"}, {"residency", {1, "eu"}}, {"sensitivity", 7}}},
                             {"target", "not an object"},
                             {"cost", 12}};
    ASSERT_TRUE((*journal)->Append({RecordKind::kDecision, forged}).ok());
    ASSERT_TRUE((*journal)->Append({RecordKind::kDecision, {{"data", "x"}, {"outcome", "placed"}}}).ok());
    ASSERT_TRUE((*journal)->Append({RecordKind::kPolicyRejected, {{"revision", "r2"}, {"problems", {1, 2}}}}).ok());
  }
  Result<ComplianceReport> report =
      BuildReport(*env, dir.str(), "2000-01-01", "2100-01-01", RulesFrom({{"r", PiiIn("r", {"eu"})}}));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->denials_by_rule.at("rule-a"), 1);
  EXPECT_EQ(report->denials_by_rule.size(), 1u);
  // residency "eu" (the string element) makes the first decision residency-bound.
  ASSERT_EQ(report->sensitive.size(), 1u);
  EXPECT_EQ(report->sensitive[0].residency, "eu");
  EXPECT_FALSE(report->sensitive[0].pii);
  EXPECT_FALSE(RenderReportMarkdown(*report).empty());
}

// A simulated run's report: the activation record carries the wall clock, the decisions
// the run's virtual time. The revision's columns are its decisions' times, in one form.
TEST(AuditReport, RevisionColumnsAreTheDecisionsTimesNotTheActivationsWallClock) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  {
    auto journal = testing::OpenTestJournal(*env, dir.str());
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    ASSERT_TRUE((*journal)->Append({RecordKind::kPolicyActivated, {{"revision", "r1"}}}).ok());
    ASSERT_TRUE((*journal)->Append({RecordKind::kPolicyActivated, {{"revision", "unused"}}}).ok());
    for (int64_t at : {int64_t{0}, int64_t{36'300'000}}) {
      ASSERT_TRUE(
          (*journal)
              ->Append({RecordKind::kDecision, {{"outcome", "queued"}, {"revision", "r1"}, {"decidedAtMillis", at}}})
              .ok());
    }
  }
  Result<ComplianceReport> report = BuildReport(*env, dir.str(), "", "", RulesFrom({}));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->revisions.size(), 2u);
  EXPECT_EQ(report->revisions[0].first_seen, "+00:00:00");
  EXPECT_EQ(report->revisions[0].last_seen, "+10:05:00");
  const std::string markdown = RenderReportMarkdown(*report);
  // Nothing placed: no rules were asked for, and none are claimed.
  EXPECT_NE(markdown.find("| `r1` | +00:00:00 | +10:05:00 | 2 | yes | - |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| `unused` | - | - | 0 | yes | - |"), std::string::npos) << markdown;
  EXPECT_TRUE(ReportToJson(*report)["revisions"][1]["firstSeen"].is_null());
}

// Each placement is judged by the revision that decided it: PII in eu breaks a revision
// whose piiZones are [ch] and not one whose are [eu]; a revision that is not available
// leaves its placements unknown (never judged by some default), unless they break a check
// every revision has.
TEST(AuditReport, EachPlacementIsJudgedByItsOwnRevision) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  {
    auto journal = testing::OpenTestJournal(*env, dir.str());
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    for (const nlohmann::json& d : {PiiPlacement("ch-ok", "r-ch", "ch"), PiiPlacement("eu-bad", "r-ch", "eu"),
                                    PiiPlacement("eu-ok", "r-eu", "eu"), PiiPlacement("gone", "r-gone", "eu")}) {
      ASSERT_TRUE((*journal)->Append({RecordKind::kDecision, d}).ok());
    }
    nlohmann::json resident = PiiPlacement("resident", "r-gone", "us");
    resident["data"]["residency"] = {"eu"};
    ASSERT_TRUE((*journal)->Append({RecordKind::kDecision, resident}).ok());
  }
  Result<ComplianceReport> report = BuildReport(
      *env, dir.str(), "", "", RulesFrom({{"r-ch", PiiIn("r-ch", {"ch"})}, {"r-eu", PiiIn("r-eu", {"eu"})}}));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->sensitive.size(), 5u);
  std::map<std::string, ComplianceVerdict> verdicts;
  for (const auto& s : report->sensitive) verdicts[s.workload] = s.verdict;
  EXPECT_TRUE(verdicts["ch-ok"].ok());
  EXPECT_EQ(verdicts["ch-ok"].checked, (std::vector<std::string>{"pii-zones [ch]", "verdict"}));
  EXPECT_TRUE(verdicts["eu-bad"].violation());
  EXPECT_EQ(verdicts["eu-bad"].rule, "pii-zones");
  EXPECT_EQ(verdicts["eu-bad"].detail,
            "personal data must stay in [ch] (policy zones); ran on eu-cloud (provider gcp, zone eu, region eu-1)");
  EXPECT_TRUE(verdicts["eu-ok"].ok());
  EXPECT_TRUE(verdicts["gone"].unknown());
  EXPECT_EQ(verdicts["gone"].detail, "revision r-gone is not available: gone");
  EXPECT_TRUE(verdicts["resident"].violation());
  EXPECT_EQ(verdicts["resident"].rule, "data-residency");
  EXPECT_EQ(report->violations, 2u);
  EXPECT_EQ(report->unknown, 1u);

  const std::string markdown = RenderReportMarkdown(*report);
  EXPECT_EQ(markdown.find("# gpufed audit report\n\n> **COMPLIANCE VIOLATION: 2 placements"), 0u) << markdown;
  EXPECT_NE(markdown.find("> **NOT JUDGED: 1 placement"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("> - revision r-gone is not available: gone\n"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find("| `r-ch` | "), std::string::npos) << markdown;
  EXPECT_NE(markdown.find(" | data-residency; pii-zones [ch] |"), std::string::npos) << markdown;
  EXPECT_NE(markdown.find(" | unknown: revision r-gone is not available: gone |"), std::string::npos) << markdown;
  const nlohmann::json json = ReportToJson(*report);
  EXPECT_EQ(json["unknown"], 1);
  EXPECT_EQ(json["sensitive"][3]["verdict"], "unknown");
  EXPECT_EQ(json["sensitive"][3]["unknown"]["reason"], "revision r-gone is not available: gone");
  EXPECT_EQ(json["revisions"][2]["unavailable"], "revision r-gone is not available: gone");
  EXPECT_EQ(json["sensitive"][1]["violation"]["rule"], "pii-zones");
}

// A revision that enforces no compliance-zones policy does not bind PII to any zone: the
// check does not apply, and the report says why instead of inventing one.
TEST(AuditReport, ACheckTheRevisionDoesNotEnforceIsNotApplicable) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  {
    auto journal = testing::OpenTestJournal(*env, dir.str());
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    ASSERT_TRUE((*journal)->Append({RecordKind::kDecision, PiiPlacement("anywhere", "r-none", "us")}).ok());
  }
  ComplianceRules none;
  none.revision = "r-none";
  none.not_enforced["stdlib/compliance-zones"] = {"policy trial has enforcement warn"};
  Result<ComplianceReport> report = BuildReport(*env, dir.str(), "", "", RulesFrom({{"r-none", none}}));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->sensitive.size(), 1u);
  const ComplianceVerdict& v = report->sensitive[0].verdict;
  EXPECT_TRUE(v.ok());
  EXPECT_EQ(v.not_applicable,
            (std::vector<std::string>{"pii-zones: revision r-none enforces no "
                                      "stdlib/compliance-zones (policy trial has enforcement warn)"}));
  EXPECT_NE(RenderReportMarkdown(*report).find("| verdict; not applicable: pii-zones: revision r-none enforces no "),
            std::string::npos);
}

}  // namespace
}  // namespace gpufed::audit
