#include "controller/audit/records.h"

#include <gtest/gtest.h>

#include "controller/audit/inputs.h"
#include "controller/config/loader.h"

namespace gpufed::audit {
namespace {

const std::string kQuickstart = std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart";

TEST(WorkloadDocument, RoundTripsThroughTheLoaderForEveryQuickstartWorkload) {
  config::LoadResult repo = config::LoadRepository({kQuickstart});
  ASSERT_TRUE(repo.ok());
  ASSERT_FALSE(repo.config.workloads.empty());
  for (const model::Workload& w : repo.config.workloads) {
    nlohmann::json doc = WorkloadDocument(w);
    config::LoadResult again = config::LoadText(doc.dump(), "snapshot.json", &repo.config);
    ASSERT_TRUE(again.ok()) << w.metadata.name << ": " << doc.dump();
    ASSERT_EQ(again.config.workloads.size(), 1u);
    EXPECT_EQ(WorkloadSpecHash(again.config.workloads[0]), WorkloadSpecHash(w)) << doc.dump();
  }
}

// The quickstart repository, every workload pending, and its plan.
class PlanRecords : public ::testing::Test {
 protected:
  void MakeQuickstartPlan(size_t explain_clusters = placement::Snapshot::kExplainAllClusters) {
    repo = config::LoadRepository({kQuickstart});
    ASSERT_TRUE(repo.ok());
    snapshot.config = &repo.config;
    snapshot.explain_clusters = explain_clusters;
    for (const model::Workload& w : repo.config.workloads) snapshot.pending.push_back(&w);
    plan = placement::MakePlan(snapshot);
  }

  config::LoadResult repo;
  placement::Snapshot snapshot;
  placement::Plan plan;
};

TEST_F(PlanRecords, CarriesSpecHashTargetAndBudgetLeft) {
  ASSERT_NO_FATAL_FAILURE(MakeQuickstartPlan());
  std::vector<AuditRecord> records = audit::PlanRecords(plan, snapshot, "sha256:abc");
  ASSERT_EQ(records.size(), plan.decisions.size());
  int placed = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const nlohmann::json& p = records[i].payload;
    EXPECT_EQ(p["workload"], plan.decisions[i].workload);
    EXPECT_EQ(p["inputs"], "sha256:abc");
    EXPECT_EQ(p["specHash"].get<std::string>().substr(0, 7), "sha256:");
    EXPECT_EQ(p["verdicts"].size(), plan.decisions[i].verdicts.size());
    if (p["outcome"] == "placed") {
      ++placed;
      EXPECT_FALSE(p["target"]["zone"].get<std::string>().empty());
      EXPECT_TRUE(p.contains("cost"));
    }
  }
  EXPECT_GT(placed, 0);
}

TEST_F(PlanRecords, LargeFederationsRecordGroupsForTheClustersNotListed) {
  ASSERT_NO_FATAL_FAILURE(MakeQuickstartPlan(1));  // the quickstart's three clusters count as "large"
  std::vector<AuditRecord> records = audit::PlanRecords(plan, snapshot, "sha256:abc");
  int grouped = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const nlohmann::json& p = records[i].payload;
    int clusters = static_cast<int>(p["verdicts"].size());
    for (const nlohmann::json& g : p.value("verdictGroups", nlohmann::json::array())) {
      clusters += g["clusters"].get<int>();
      EXPECT_FALSE(g["examples"].empty());
      ++grouped;
    }
    // Quota and admit decisions come before any cluster is looked at.
    if (clusters > 0) {
      EXPECT_EQ(clusters, static_cast<int>(repo.config.clusters.size())) << p.dump();
    }
  }
  EXPECT_GT(grouped, 0);
}

TEST_F(PlanRecords, BudgetLeftFallsWithEachPlacementOfTheTenant) {
  ASSERT_NO_FATAL_FAILURE(MakeQuickstartPlan());
  std::map<std::string, std::vector<std::string>> left;
  for (const AuditRecord& r : audit::PlanRecords(plan, snapshot, "")) {
    if (r.payload.contains("budgetLeft") && r.payload["outcome"] == "placed") {
      left[r.payload["tenant"]].push_back(r.payload["budgetLeft"]);
    }
  }
  ASSERT_FALSE(left.empty());
  for (const auto& [tenant, values] : left) {
    for (size_t i = 1; i < values.size(); ++i) {
      EXPECT_LE(Money::Parse(values[i])->micros(), Money::Parse(values[i - 1])->micros()) << tenant;
    }
  }
}

}  // namespace
}  // namespace gpufed::audit
