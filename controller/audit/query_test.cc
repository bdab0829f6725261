#include "controller/audit/query.h"

#include <gtest/gtest.h>

#include "controller/audit/journal.h"
#include "controller/audit/records.h"
#include "controller/audit/testing/test_journal.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

// A chain can be valid and its payloads still of the wrong types (forged, or from a newer
// writer): the table reads such members as absent instead of throwing (report_test.cc
// checks the report).
TEST(AuditQuery, WrongTypedMembersReadAsAbsent) {
  const std::string table = RenderQueryTable({{{"seq", "one"}, {"kind", "policy-rejected"}, {"problems", {1}}},
                                              {{"seq", 2}, {"target", {{"cluster", 5}}}, {"problems", {"bad yaml"}}}});
  EXPECT_NE(table.find("bad yaml"), std::string::npos) << table;
  // A connector change is shown where a decision's outcome is.
  const std::string changes = RenderQueryTable(
      {{{"seq", 3}, {"kind", "cluster-connector"}, {"cluster", "porto"}, {"change", "replaced"}, {"revision", "r2"}}});
  EXPECT_NE(changes.find(" replaced  porto "), std::string::npos) << changes;
}

// Who did what: the submission and the cancel of a workload are found by its name, by kind
// and by principal, and the table says who.
TEST(AuditQuery, SubmissionsAndCancelsAreFoundByPrincipalAndTheTableSaysWho) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  {
    auto journal = testing::OpenTestJournal(*env, dir.str());
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    WorkloadSubmission s;
    s.workload = "train";
    s.uid = "train-u1";
    s.tenant = "alpha";
    s.principal = "alice";
    s.source = "api";
    ASSERT_TRUE((*journal)->Append(WorkloadSubmittedRecord(s)).ok());
    ASSERT_TRUE(
        (*journal)
            ->Append({RecordKind::kDecision, {{"workload", "train"}, {"tenant", "alpha"}, {"outcome", "queued"}}})
            .ok());
    WorkloadCancellation c;
    c.workload = "train";
    c.uid = "train-u1";
    c.tenant = "alpha";
    c.principal = "bob";
    c.state = "queued";
    ASSERT_TRUE((*journal)->Append(WorkloadCancelledRecord(c)).ok());
  }
  auto scan = [&](const QueryFilter& filter) {
    std::vector<nlohmann::json> found;
    Status s = ScanRecords(*env, dir.str(), filter, [&](const nlohmann::json& r) { found.push_back(r); });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return found;
  };
  QueryFilter by_bob;
  by_bob.principal = "bob";
  ASSERT_EQ(scan(by_bob).size(), 1u);
  EXPECT_EQ(scan(by_bob)[0]["kind"], "workload-cancelled");
  QueryFilter submitted;
  submitted.kind = "workload-submitted";
  ASSERT_EQ(scan(submitted).size(), 1u);
  EXPECT_EQ(scan(submitted)[0]["principal"], "alice");
  QueryFilter train;
  train.workload = "train";
  train.tenant = "alpha";
  const std::vector<nlohmann::json> all = scan(train);
  ASSERT_EQ(all.size(), 3u);
  const std::string table = RenderQueryTable(all);
  EXPECT_NE(table.find("by alice (api)"), std::string::npos) << table;
  EXPECT_NE(table.find("by bob, was queued"), std::string::npos) << table;
}

}  // namespace
}  // namespace gpufed::audit
