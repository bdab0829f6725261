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

TEST(AttemptMeteredRecord, CarriesWhatTheConnectorMeteredWithExactMoney) {
  MeteredAttempt a;
  a.workload = "llama-ft-42";
  a.uid = "llama-ft-42-abc";
  a.tenant = "team-nlp";
  a.cluster = "eu-cloud";
  a.attempt = 2;
  a.outcome = "preempted";
  a.gpu_seconds = 4 * 1800.1234;  // GPU-seconds are kept to the millisecond
  a.cost = Money(19652544400, "EUR");
  a.cloud = true;
  a.started = Duration::FromMillis(3600000);
  a.finished = Duration::FromMillis(5400000);
  a.booked_at = Duration::FromMillis(5460000);
  AuditRecord r = AttemptMeteredRecord(a);
  EXPECT_EQ(r.kind, RecordKind::kAttemptMetered);
  EXPECT_STREQ(RecordKindName(r.kind), "attempt-metered");
  EXPECT_EQ(ParseRecordKind("attempt-metered"), RecordKind::kAttemptMetered);
  EXPECT_EQ(r.payload["workload"], "llama-ft-42");
  EXPECT_EQ(r.payload["uid"], "llama-ft-42-abc");
  EXPECT_EQ(r.payload["tenant"], "team-nlp");
  EXPECT_EQ(r.payload["cluster"], "eu-cloud");
  EXPECT_EQ(r.payload["attempt"], 2);
  EXPECT_EQ(r.payload["outcome"], "preempted");
  EXPECT_EQ(r.payload["cost"], "19652.5444 EUR");  // exact, never a float
  EXPECT_EQ(r.payload["cloud"], true);
  EXPECT_EQ(r.payload["startedMillis"], 3600000);
  EXPECT_EQ(r.payload["finishedMillis"], 5400000);
  EXPECT_EQ(r.payload["bookedAtMillis"], 5460000);
  // As the journal writes it: the shortest text of the rounded double is the decimal.
  EXPECT_NE(DumpPayload(r.payload).find("\"gpuSeconds\":7200.494"), std::string::npos) << DumpPayload(r.payload);
}

TEST(AttemptMeteredRecord, AnAttemptTheClusterNeverReportedIsChargedNothing) {
  MeteredAttempt a;
  a.workload = "w";
  a.uid = "w-1";
  a.outcome = "lost";
  AuditRecord r = AttemptMeteredRecord(a);
  EXPECT_EQ(r.payload["gpuSeconds"], 0.0);
  EXPECT_EQ(r.payload["cost"], "0.00");
  EXPECT_EQ(r.payload["startedMillis"], 0);
}

TEST(WorkloadSubmittedRecord, NamesWhoSubmittedWhatUnderWhichRevision) {
  WorkloadSubmission s;
  s.workload = "train";
  s.uid = "train-u7";
  s.tenant = "team-nlp";
  s.principal = "nlp-pipeline";
  s.source = "api";
  s.spec_hash = "sha256:" + std::string(64, 'a');
  s.revision = "sha256:" + std::string(64, 'b');
  s.accepted_at = Duration::FromMillis(90000);
  AuditRecord r = WorkloadSubmittedRecord(s);
  EXPECT_EQ(r.kind, RecordKind::kWorkloadSubmitted);
  EXPECT_STREQ(RecordKindName(r.kind), "workload-submitted");
  EXPECT_EQ(ParseRecordKind("workload-submitted"), RecordKind::kWorkloadSubmitted);
  EXPECT_EQ(r.payload, nlohmann::json({{"workload", "train"},
                                       {"uid", "train-u7"},
                                       {"tenant", "team-nlp"},
                                       {"principal", "nlp-pipeline"},
                                       {"source", "api"},
                                       {"specHash", s.spec_hash},
                                       {"revision", s.revision},
                                       {"acceptedAtMillis", 90000}}));
  // A repository workload names the commit of its revision.
  s.source = "repository";
  s.principal = "repository";
  s.commit = std::string(40, 'c');
  EXPECT_EQ(WorkloadSubmittedRecord(s).payload["commit"], s.commit);
}

TEST(WorkloadCancelledRecord, NamesWhoCancelledAndTheStateItWasIn) {
  WorkloadCancellation c;
  c.workload = "sweep";
  c.uid = "sweep-u3";
  c.tenant = "team-vision";
  c.principal = "vision-ci@example.com";
  c.state = "queued";
  c.cancelled_at = Duration::FromMillis(120000);
  AuditRecord r = WorkloadCancelledRecord(c);
  EXPECT_EQ(r.kind, RecordKind::kWorkloadCancelled);
  EXPECT_STREQ(RecordKindName(r.kind), "workload-cancelled");
  EXPECT_EQ(ParseRecordKind("workload-cancelled"), RecordKind::kWorkloadCancelled);
  EXPECT_EQ(r.payload, nlohmann::json({{"workload", "sweep"},
                                       {"uid", "sweep-u3"},
                                       {"tenant", "team-vision"},
                                       {"principal", "vision-ci@example.com"},
                                       {"state", "queued"},
                                       {"attempt", 1},
                                       {"cancelledAtMillis", 120000}}));
  c.state = "running";
  c.cluster = "munich-dgx";
  c.attempt = 2;
  EXPECT_EQ(WorkloadCancelledRecord(c).payload["cluster"], "munich-dgx");
  EXPECT_EQ(WorkloadCancelledRecord(c).payload["attempt"], 2);
}

TEST(ConnectorActionRecord, NamesTheWorkloadsUidTenantAndTheAttemptsKey) {
  ConnectorActionResult a;
  a.action = "cancel";
  a.key = "sweep-u3.a2";
  a.workload = "sweep";
  a.workload_uid = "sweep-u3";
  a.tenant = "team-vision";
  a.cluster = "munich-dgx";
  a.attempt = 2;
  a.ok = true;
  a.status = "OK";
  AuditRecord r = ConnectorActionRecord(a);
  EXPECT_EQ(r.payload["uid"], "sweep-u3");
  EXPECT_EQ(r.payload["key"], "sweep-u3.a2");
  EXPECT_EQ(r.payload["tenant"], "team-vision");
}

TEST(RecordKinds, EveryNameInTheListParsesBack) {
  const std::string names = RecordKindNames();
  size_t start = 0;
  int count = 0;
  while (start < names.size()) {
    size_t end = names.find(", ", start);
    if (end == std::string::npos) end = names.size();
    const std::string name = names.substr(start, end - start);
    EXPECT_TRUE(ParseRecordKind(name).has_value()) << name;
    ++count;
    start = end + 2;
  }
  EXPECT_EQ(count, 17);
  EXPECT_FALSE(ParseRecordKind("workload-cancelled,workload-submitted").has_value());
}

}  // namespace
}  // namespace gpufed::audit
