// The audit journal as the loop's write-ahead log: a quickstart-sized run leaves a
// journal that verifies and holds every decision the store indexes, each before the
// connector action that carries it out; a journal that cannot be written stops
// placement and makes the controller not ready.
#include <gtest/gtest.h>

#include <map>

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"
#include "controller/audit/testing/fault_env.h"
#include "controller/audit/verify.h"
#include "controller/common/action_key.h"
#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {
namespace {

// Every record of the journal in <audit_dir>, by seq.
std::map<uint64_t, nlohmann::json> ReadJournal(const std::string& audit_dir) {
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  std::map<uint64_t, nlohmann::json> out;
  auto segments = audit::ListSegments(*env, audit_dir + "/journal");
  EXPECT_TRUE(segments.ok());
  if (!segments.ok()) return out;
  for (const auto& [first, path] : *segments) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      nlohmann::json j = nlohmann::json::parse(line);
      out[j["seq"].get<uint64_t>()] = j;
    }
  }
  return out;
}

TEST(AuditWiring, QuickstartJournalVerifiesAndHoldsEveryDecisionBeforeItsAction) {
  std::string dir = ::testing::TempDir() + "/gpufed_it_audit_quickstart";
  std::filesystem::remove_all(dir);
  std::string repo = std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart";
  Harness h;
  Status opened = h.OpenRuntime(repo, dir + "/state", repo + "/simulation/scenario.yaml");
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  ASSERT_TRUE(h.RunUntilIdle().ok());
  EXPECT_TRUE(h.Ctl().audit_health().ok());

  // Store decisions per workload (the explain/API index).
  std::map<std::string, int> stored;
  int stored_total = 0;
  std::map<std::string, std::pair<std::string, std::string>> owners;  // uid -> name, tenant
  auto all = h.Ctl().List("");
  ASSERT_TRUE(all.ok());
  for (const store::WorkloadRecord& r : *all) {
    owners[r.uid] = {r.name, r.tenant};
    auto rows = h.Ctl().Decisions({r.tenant, r.name}, "");
    ASSERT_TRUE(rows.ok());
    stored[r.name] += static_cast<int>(rows->size());
    stored_total += static_cast<int>(rows->size());
  }
  ASSERT_GT(stored_total, 0);
  ASSERT_TRUE(h.app->Stop("test done").ok());  // stop record and final checkpoint
  h.Close();

  const std::string audit_dir = dir + "/state/audit";
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  auto pub = env->ReadFile(audit_dir + "/signing.pub");
  ASSERT_TRUE(pub.ok());
  auto key = audit::SignatureVerifier::FromPublicKeyPem(*pub);
  ASSERT_TRUE(key.ok());
  audit::VerifyOptions vo;
  vo.key = &*key;
  auto report = audit::VerifyJournalDir(*env, audit_dir, vo);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok) << report->error;
  EXPECT_GE(report->signatures_verified, 1u);

  std::map<uint64_t, nlohmann::json> records = ReadJournal(audit_dir);
  std::map<std::string, int> journaled;
  int journaled_total = 0, submits = 0;
  std::map<std::string, int> actions;  // by action kind
  for (const auto& [seq, r] : records) {
    std::string kind = r["kind"];
    if (kind == "decision") {
      journaled[r["workload"].get<std::string>()]++;
      ++journaled_total;
    }
    if (kind == "connector-action") {
      // Every action names its workload's uid, tenant and the key of the attempt it acts on.
      ++actions[r["action"].get<std::string>()];
      const std::optional<ParsedActionKey> key = ParseActionKey(r.value("key", ""));
      ASSERT_TRUE(key.has_value()) << r.dump();
      EXPECT_EQ(r.value("uid", ""), key->uid) << r.dump();
      EXPECT_EQ(r.value("attempt", 0), key->attempt) << r.dump();
      auto owner = owners.find(key->uid);
      ASSERT_NE(owner, owners.end()) << r.dump();
      EXPECT_EQ(owner->second.first, r.value("workload", "")) << r.dump();
      EXPECT_EQ(owner->second.second, r.value("tenant", "")) << r.dump();
    }
    if (kind == "connector-action" && r["action"] == "submit") {
      ++submits;
      // The decision it carries out was durable before the connector was called.
      uint64_t decision = r["decisionSeq"].get<uint64_t>();
      ASSERT_GT(decision, 0u) << r.dump();
      EXPECT_LT(decision, seq);
      ASSERT_TRUE(records.count(decision)) << decision;
      EXPECT_EQ(records[decision]["kind"], "decision");
      EXPECT_EQ(records[decision]["workload"], r["workload"]);
      EXPECT_EQ(records[decision]["outcome"], "placed");
    }
  }
  EXPECT_EQ(journaled_total, stored_total);
  EXPECT_EQ(journaled, stored);
  EXPECT_GT(submits, 0);
  EXPECT_GT(actions["preempt"], 0);  // the quickstart preempts sweeps: not only submits were checked
  EXPECT_EQ(records.begin()->second["kind"], "controller-start");
  EXPECT_EQ(records.rbegin()->second["kind"], "checkpoint");
}

// A sim-connector controller over <dir>/repo whose audit journal writes through `fault`.
void OpenOverFaultEnv(Harness& h, const std::string& dir, audit::testing::FaultEnv* fault,
                      Durability durability = Durability::kSynced) {
  runtime::AppOptions o;
  o.config_dir = dir + "/repo";
  o.state_dir = dir + "/state";
  o.audit_env = fault;
  o.durability = durability;
  Status opened = h.OpenApp(o);
  ASSERT_TRUE(opened.ok()) << opened.ToString();
}

TEST(AuditWiring, AJournalThatCannotBeWrittenStopsPlacementAndIsNotReady) {
  std::string dir = FreshDir("audit_fault");
  std::ofstream(dir + "/repo/work.yaml") << WorkloadYaml("a", "alpha", 8, "2h") << "---\n"
                                         << WorkloadYaml("b", "alpha", 4, "1h");
  audit::testing::FaultEnv fault;
  Harness h;
  ASSERT_NO_FATAL_FAILURE(OpenOverFaultEnv(h, dir, &fault));
  fault.fail_sync = true;  // from the first pass on, nothing can be made durable
  for (int i = 0; i < 10; ++i) {
    (void)h.controller->Pass();
    h.Step();
  }
  EXPECT_FALSE(h.controller->audit_health().ok());
  EXPECT_FALSE(h.controller->ready());
  for (const char* name : {"a", "b"}) {
    store::WorkloadRecord r = h.Get(name);
    EXPECT_TRUE(store::IsWaiting(r.state)) << name << ": " << store::StateName(r.state);
    EXPECT_TRUE(r.cluster.empty()) << name;
    auto submit = h.controller->store()->GetAction("submit", r.ActionKey());
    ASSERT_TRUE(submit.ok());
    EXPECT_FALSE(submit->has_value()) << name << ": a connector action without a journaled decision";
  }
}

TEST(AuditWiring, AJournalThatFailsMidRunStopsNewPlacements) {
  std::string dir = FreshDir("audit_fault_mid");
  std::ofstream(dir + "/repo/work.yaml") << WorkloadYaml("a", "alpha", 4, "2h");
  audit::testing::FaultEnv fault;
  Harness h;
  ASSERT_NO_FATAL_FAILURE(OpenOverFaultEnv(h, dir, &fault));
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(h.controller->Pass().ok());
    h.Step();
  }
  EXPECT_TRUE(h.controller->ready());
  EXPECT_NE(h.Get("a").state, store::WorkloadState::kQueued);

  // Accepted (and journalled) before the disk fills; not placed after.
  ASSERT_TRUE(h.controller->Submit(WorkloadYaml("late", "alpha", 2, "1h"), "late.yaml", By("")).ok());
  fault.disk_bytes_left = 0;  // the disk fills up
  // A submission the journal cannot record is refused and not stored (write-ahead).
  Result<store::WorkloadRecord> refused =
      h.controller->Submit(WorkloadYaml("later", "alpha", 2, "1h"), "later.yaml", By(""));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable) << refused.status().ToString();
  EXPECT_TRUE(h.Get("later").uid.empty()) << "stored a submission the journal did not hold";
  for (int i = 0; i < 6; ++i) {
    (void)h.controller->Pass();
    h.Step();
  }
  EXPECT_FALSE(h.controller->ready());
  store::WorkloadRecord late = h.Get("late");
  EXPECT_TRUE(store::IsWaiting(late.state)) << store::StateName(late.state);
  auto submit = h.controller->store()->GetAction("submit", late.ActionKey());
  ASSERT_TRUE(submit.ok());
  EXPECT_FALSE(submit->has_value());
}

// A pass's decisions are made durable together: one fdatasync for all of them, one for
// the pass's snapshot and one for the results of its placements' connector actions, not
// one per decision and one per action.
TEST(AuditWiring, APassJournalsItsDecisionsAndActionResultsInOneSyncEach) {
  std::string dir = FreshDir("audit_batch");
  {
    std::ofstream work(dir + "/repo/work.yaml");
    for (int i = 0; i < 12; ++i) work << (i ? "---\n" : "") << WorkloadYaml("w" + std::to_string(i), "alpha", 1, "2h");
  }
  audit::testing::FaultEnv fault;
  Harness h;
  ASSERT_NO_FATAL_FAILURE(OpenOverFaultEnv(h, dir, &fault));
  const uint64_t head_before = h.controller->audit_head();
  const int64_t syncs_before = fault.syncs;
  Result<reconcile::PassStats> pass = h.controller->Pass();
  ASSERT_TRUE(pass.ok()) << pass.status().ToString();
  const int64_t syncs = fault.syncs - syncs_before;
  ASSERT_GE(pass->decisions, 12);
  ASSERT_GT(pass->placed, 0);
  ASSERT_GT(h.controller->audit_head(), head_before + static_cast<uint64_t>(pass->decisions));
  EXPECT_LE(syncs, 3) << pass->decisions << " decisions, " << pass->placed << " placed";
}

// A simulation run unsynced (the Philly replay's default) writes the same journal without
// one fdatasync: with every sync failing, it still places, stays healthy and verifies, and
// its controller-start record says that it did not sync.
TEST(AuditWiring, AnUnsyncedControllerJournalsWithoutWaitingForTheDiskAndSaysSo) {
  std::string dir = FreshDir("audit_unsynced");
  std::ofstream(dir + "/repo/work.yaml") << WorkloadYaml("a", "alpha", 4, "1h") << "---\n"
                                         << WorkloadYaml("b", "alpha", 2, "1h");
  audit::testing::FaultEnv fault;
  fault.fail_sync = true;  // any fdatasync of the journal or a snapshot would fail the run
  Harness h;
  ASSERT_NO_FATAL_FAILURE(OpenOverFaultEnv(h, dir, &fault, Durability::kUnsynced));
  int placed = 0;
  for (int i = 0; i < 6; ++i) {
    Result<reconcile::PassStats> pass = h.controller->Pass();
    ASSERT_TRUE(pass.ok()) << pass.status().ToString();
    placed += pass->placed;
    h.Step();
  }
  EXPECT_EQ(placed, 2);
  EXPECT_TRUE(h.controller->audit_health().ok()) << h.controller->audit_health().ToString();
  EXPECT_EQ(fault.syncs, 0);
  ASSERT_TRUE(h.Stop("test done").ok());
  h.Close();

  std::map<uint64_t, nlohmann::json> records = ReadJournal(dir + "/state/audit");
  ASSERT_FALSE(records.empty());
  EXPECT_EQ(records.begin()->second["kind"], "controller-start");
  EXPECT_EQ(records.begin()->second["durability"], "unsynced");
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  auto report = audit::VerifyJournalDir(*env, dir + "/state/audit", audit::VerifyOptions{});
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok) << report->error;
}

TEST(AuditWiring, ADurableControllerStartRecordHasNoDurabilityField) {
  std::string dir = FreshDir("audit_synced_start");
  audit::testing::FaultEnv fault;
  Harness h;
  ASSERT_NO_FATAL_FAILURE(OpenOverFaultEnv(h, dir, &fault));
  EXPECT_GT(fault.syncs, 0);
  ASSERT_TRUE(h.Stop("test done").ok());
  h.Close();
  std::map<uint64_t, nlohmann::json> records = ReadJournal(dir + "/state/audit");
  ASSERT_FALSE(records.empty());
  EXPECT_FALSE(records.begin()->second.contains("durability")) << records.begin()->second.dump();
}

}  // namespace
}  // namespace gpufed::testing
