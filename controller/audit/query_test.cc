#include "controller/audit/query.h"

#include <gtest/gtest.h>

#include "controller/audit/journal.h"
#include "controller/audit/testing/test_journal.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

// A chain can be valid and its payloads still of the wrong types (forged, or from a newer
// writer): the report and the table read such members as absent instead of throwing.
TEST(AuditQuery, WrongTypedMembersReadAsAbsent) {
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
  Result<ComplianceReport> report = BuildReport(*env, dir.str(), "2000-01-01", "2100-01-01");
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->denials_by_rule.at("rule-a"), 1);
  EXPECT_EQ(report->denials_by_rule.size(), 1u);
  // residency "eu" (the string element) makes the first decision residency-bound.
  ASSERT_EQ(report->sensitive.size(), 1u);
  EXPECT_EQ(report->sensitive[0].residency, "eu");
  EXPECT_FALSE(report->sensitive[0].pii);
  EXPECT_FALSE(RenderReportMarkdown(*report).empty());
  const std::string table = RenderQueryTable({{{"seq", "one"}, {"kind", "policy-rejected"}, {"problems", {1}}},
                                              {{"seq", 2}, {"target", {{"cluster", 5}}}, {"problems", {"bad yaml"}}}});
  EXPECT_NE(table.find("bad yaml"), std::string::npos) << table;
}

}  // namespace
}  // namespace gpufed::audit
