// `gpufed audit report` judges each placement by the policy revision that decided it: a
// small repository written here, whose stdlib/compliance-zones policy keeps PII in [ch]
// (not the library's default [eu]), and a second one that keeps it in [eu]; decisions
// recorded under each, with their snapshots naming the repository, as the loop writes them.
#include "controller/cli/compliance_rules.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <tuple>

#include "controller/audit/file_snapshot_store.h"
#include "controller/audit/journal.h"
#include "controller/audit/testing/test_journal.h"
#include "controller/cli/cli.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::cli {
namespace {

// One on-prem cluster in Zurich (zone ch), one cloud in Frankfurt (zone eu); the policy
// `zones` imports stdlib/compliance-zones with `pii_zones`, and a PolicyTest pins what the
// placer does with PII under it (the revision activates only if it passes).
void WriteRepository(const testutil::TempDir& dir, const std::string& repo, const std::string& pii_zones,
                     const std::string& pii_cluster, const std::string& zones_enforcement = "deny") {
  dir.Write(repo + "/fleet.yaml", R"(apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: zurich}
spec:
  provider: onprem
  zone: ch
  connector: {type: sim}
  nodePools:
    - {name: a100, count: 1, gpu: {model: A100-80GB, count: 4, memory: 80Gi}}
  pricing: {currency: CHF, gpuHour: {A100-80GB: "1.00"}}
---
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: frankfurt}
spec:
  provider: ionos
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: a100, count: 1, gpu: {model: A100-80GB, count: 4, memory: 80Gi}}
  pricing: {currency: CHF, gpuHour: {A100-80GB: "2.00"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: team}
spec: {weight: 1}
)");
  dir.Write(repo + "/policies.yaml", R"(apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: zones}
spec:
  import: stdlib/compliance-zones
  enforcement: )" + zones_enforcement + R"(
  params: {piiZones: )" + pii_zones + R"(}
---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: protection}
spec:
  import: stdlib/data-sensitivity
---
apiVersion: gpufed/v1alpha1
kind: PolicyTest
metadata: {name: pii}
spec:
  cases:
    - name: PII goes where the zones let it
      clusters: [)" + pii_cluster + R"(]
      workload: {tenant: team, resources: {gpus: 1}, data: {pii: true}}
      expect: {placed: {cluster: )" + pii_cluster +
                                         R"(}}
)");
}

// The repository as `audit report` loads it (stdlib imports resolved, tests run).
const model::Config* Loaded(RecordedRevisions& revisions, const std::string& repo) {
  Result<const policy::Revision*> r = revisions.Load(repo);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? &(*r)->config : nullptr;
}

std::string RevisionOf(const std::string& repo) {
  RecordedRevisions revisions;
  const model::Config* config = Loaded(revisions, repo);
  return config != nullptr ? config->revision : "";
}

// A placed PII decision as the loop journals it: its revision, and its pass's snapshot.
nlohmann::json PiiPlacement(const std::string& workload, const std::string& revision, const std::string& inputs,
                            const std::string& cluster, const std::string& zone) {
  return {{"workload", workload},
          {"tenant", "team"},
          {"outcome", "placed"},
          {"revision", revision},
          {"inputs", inputs},
          {"cost", "1.00 CHF"},
          {"data", {{"sensitivity", "internal"}, {"pii", true}, {"residency", nlohmann::json::array()}}},
          {"verdicts", {{{"cluster", cluster}, {"eligible", true}}}},
          {"target", {{"cluster", cluster}, {"zone", zone}, {"region", ""}, {"provider", "onprem"}}}};
}

// Runs `gpufed ARGS...` in process; returns the exit code, stdout in *out.
int RunCli(std::vector<std::string> args, std::string* out) {
  args.insert(args.begin(), "gpufed");
  std::vector<char*> argv;
  argv.reserve(args.size());
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  const int rc = Main(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(old);
  *out = captured.str();
  return rc;
}

std::map<std::string, nlohmann::json> VerdictsByWorkload(const std::string& report_json) {
  std::map<std::string, nlohmann::json> out;
  const nlohmann::json report = nlohmann::json::parse(report_json);
  for (const nlohmann::json& s : report["sensitive"]) {
    out[s["workload"].get<std::string>()] = s;
  }
  return out;
}

TEST(ComplianceRulesOf, ReadsTheRevisionsOwnPiiZonesAndWhatItEnforces) {
  testutil::TempDir dir;
  WriteRepository(dir, "ch", "[ch]", "zurich");
  RecordedRevisions revisions;
  const model::Config* config = Loaded(revisions, dir.str() + "/ch");
  ASSERT_NE(config, nullptr);
  audit::ComplianceRules rules = ComplianceRulesOf(*config);
  EXPECT_EQ(rules.revision, config->revision);
  ASSERT_EQ(rules.zones.size(), 1u);
  EXPECT_EQ(rules.zones[0].policy, "zones");
  EXPECT_EQ(rules.zones[0].pii_zones, (std::vector<std::string>{"ch"}));
  EXPECT_TRUE(rules.zones[0].by_sensitivity.empty());
  EXPECT_EQ(rules.restricted_onprem_policies, (std::vector<std::string>{"protection"}));

  // The same policy in warn: nothing bound, and the report can say why.
  WriteRepository(dir, "warn", "[ch]", "zurich", "warn");
  config = Loaded(revisions, dir.str() + "/warn");
  ASSERT_NE(config, nullptr);
  rules = ComplianceRulesOf(*config);
  EXPECT_TRUE(rules.zones.empty());
  EXPECT_EQ(rules.not_enforced["stdlib/compliance-zones"],
            (std::vector<std::string>{"policy zones has enforcement warn"}));
}

TEST(ComplianceRulesOf, AHookNamedDirectlyCountsWithItsPolicysParams) {
  testutil::TempDir dir;
  WriteRepository(dir, "repo", "[ch]", "zurich");
  dir.Write("repo/policies.yaml", R"(apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: own-zones}
spec:
  lua: [stdlib/compliance-zones.lua]
  params: {piiZones: [ch, eu], zonesBySensitivity: {confidential: [ch]}}
)");
  RecordedRevisions revisions;
  const model::Config* config = Loaded(revisions, dir.str() + "/repo");
  ASSERT_NE(config, nullptr);
  audit::ComplianceRules rules = ComplianceRulesOf(*config);
  ASSERT_EQ(rules.zones.size(), 1u);
  EXPECT_EQ(rules.zones[0].policy, "own-zones");
  EXPECT_EQ(rules.zones[0].pii_zones, (std::vector<std::string>{"ch", "eu"}));
  EXPECT_EQ(rules.zones[0].by_sensitivity["confidential"], (std::vector<std::string>{"ch"}));
  EXPECT_FALSE(rules.restricted_only_onprem());
}

class AuditReportByRevision : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteRepository(dir_, "ch", "[ch]", "zurich");
    WriteRepository(dir_, "eu", "[eu]", "frankfurt");
    rev_ch_ = RevisionOf(Repo("ch"));
    rev_eu_ = RevisionOf(Repo("eu"));
    ASSERT_NE(rev_ch_, rev_eu_);
  }

  std::string Repo(const std::string& name) const { return dir_.str() + "/" + name; }
  std::string AuditDir() const { return dir_.str() + "/audit"; }

  // The decisions, each under `revision` with a snapshot naming `repo` as the loop's does.
  void Journal(const std::vector<std::tuple<std::string, std::string, std::string, std::string>>& placements) {
    std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
    audit::FileSnapshotStore store(env.get(), AuditDir());
    auto journal = audit::testing::OpenTestJournal(*env, AuditDir());
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    for (const auto& [workload, repo, cluster, zone] : placements) {
      const std::string revision = repo == "ch" ? rev_ch_ : rev_eu_;
      Result<std::string> inputs =
          store.Put({{"format", 4}, {"revision", {{"id", revision}, {"repo", Repo(repo)}}}, {"nowMillis", 0}});
      ASSERT_TRUE(inputs.ok()) << inputs.status().ToString();
      nlohmann::json decision = PiiPlacement(workload, revision, *inputs, cluster, zone);
      ASSERT_TRUE((*journal)->Append({audit::RecordKind::kDecision, decision}).ok());
    }
  }

  testutil::TempDir dir_;
  std::string rev_ch_, rev_eu_;
};

TEST_F(AuditReportByRevision, PiiInEuIsFlaggedUnderARevisionThatKeepsItInCh) {
  Journal({{"pii-eu", "ch", "frankfurt", "eu"}, {"pii-ch", "ch", "zurich", "ch"}});
  std::string out;
  EXPECT_EQ(RunCli({"audit", "report", "-d", AuditDir(), "-f", "json"}, &out), 3) << out;
  std::map<std::string, nlohmann::json> verdicts = VerdictsByWorkload(out);
  EXPECT_EQ(verdicts["pii-eu"]["verdict"], "VIOLATION");
  EXPECT_EQ(verdicts["pii-eu"]["violation"]["rule"], "pii-zones");
  EXPECT_EQ(verdicts["pii-eu"]["violation"]["detail"],
            "personal data must stay in [ch] (policy zones); ran on frankfurt (provider onprem, zone eu, region ?)");
  // The library's default [eu] would have flagged this one and passed the other.
  EXPECT_EQ(verdicts["pii-ch"]["verdict"], "ok");
  EXPECT_EQ(verdicts["pii-ch"]["checks"], nlohmann::json({"pii-zones [ch]", "verdict"}));
  EXPECT_EQ(nlohmann::json::parse(out)["revisions"][0]["complianceChecks"],
            "data-residency; restricted-only-onprem; pii-zones [ch]");
}

TEST_F(AuditReportByRevision, AJournalOfTwoRevisionsJudgesEachPlacementByItsOwn) {
  Journal({{"a-ch", "ch", "zurich", "ch"},
           {"a-eu", "ch", "frankfurt", "eu"},
           {"b-eu", "eu", "frankfurt", "eu"},
           {"b-ch", "eu", "zurich", "ch"}});
  std::string out;
  EXPECT_EQ(RunCli({"audit", "report", "-d", AuditDir(), "-f", "json"}, &out), 3) << out;
  std::map<std::string, nlohmann::json> verdicts = VerdictsByWorkload(out);
  EXPECT_EQ(verdicts["a-ch"]["verdict"], "ok");
  EXPECT_EQ(verdicts["a-eu"]["verdict"], "VIOLATION");
  EXPECT_EQ(verdicts["b-eu"]["verdict"], "ok");
  EXPECT_EQ(verdicts["b-eu"]["checks"], nlohmann::json({"pii-zones [eu]", "verdict"}));
  EXPECT_EQ(verdicts["b-ch"]["verdict"], "VIOLATION");
  EXPECT_EQ(verdicts["b-ch"]["violation"]["detail"],
            "personal data must stay in [eu] (policy zones); ran on zurich (provider onprem, zone ch, region ?)");
}

TEST_F(AuditReportByRevision, ARevisionThatMovedOnIsUnknownUntilRepoNamesACheckoutOfIt) {
  Journal({{"a-ch", "ch", "zurich", "ch"}, {"b-eu", "eu", "frankfurt", "eu"}});
  std::filesystem::copy(Repo("ch"), Repo("ch-copy"), std::filesystem::copy_options::recursive);
  WriteRepository(dir_, "ch", "[ch, eu]", "zurich");  // the repository moved on
  std::string out;
  EXPECT_EQ(RunCli({"audit", "report", "-d", AuditDir(), "-f", "json"}, &out), 4) << out;
  std::map<std::string, nlohmann::json> verdicts = VerdictsByWorkload(out);
  EXPECT_EQ(verdicts["a-ch"]["verdict"], "unknown");
  const std::string reason = verdicts["a-ch"]["unknown"]["reason"];
  EXPECT_EQ(reason.rfind("revision " + rev_ch_ + " is not available: " + Repo("ch") + " is at revision ", 0), 0u)
      << reason;
  EXPECT_EQ(verdicts["b-eu"]["verdict"], "ok");
  ASSERT_EQ(RunCli({"audit", "report", "-d", AuditDir()}, &out), 4) << out;
  EXPECT_NE(out.find("> **NOT JUDGED: 1 placement"), std::string::npos) << out;
  EXPECT_NE(out.find("| unknown: revision " + rev_ch_ + " is not available: "), std::string::npos) << out;

  EXPECT_EQ(RunCli({"audit", "report", "-d", AuditDir(), "-f", "json", "--repo", Repo("ch-copy")}, &out), 0) << out;
  EXPECT_EQ(VerdictsByWorkload(out)["a-ch"]["verdict"], "ok");
  // The old fixed default is refused rather than silently applied.
  EXPECT_EQ(RunCli({"audit", "report", "-d", AuditDir(), "--pii-zones", "eu"}, &out), 2);
}

}  // namespace
}  // namespace gpufed::cli
