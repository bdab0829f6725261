// The gpufed binary against the journal in PostgreSQL (the pg_cluster fixture, a database
// per test): `audit verify|query|report --store` read the table, `audit export` writes
// a folder that `audit verify DIR` verifies (and `report` reports) the same, a changed row fails
// verification, and a connection string with a password is refused without being echoed.
// End to end: one seeded federation run with the file backend and with `run --store`
// decides the same, and `audit replay --all` passes on both, the second reading the
// journal and the pass snapshots from the database alone (or, for a database journalled
// before it kept snapshots, from a folder given with -d).
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "controller/audit/file_snapshot_store.h"
#include "controller/audit/journal.h"
#include "controller/audit/signing.h"
#include "controller/pg/testing/pg_test_server.h"
#include "controller/pgjournal/pg_journal_storage.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::cli {
namespace {

struct Process {
  int exit_code = -1;
  std::string output;  // standard output and error
};

// Runs the gpufed binary with `args` (each single-quoted for the shell; the test's paths
// and connection strings hold no quote).
Process Gpufed(const std::vector<std::string>& args) {
  std::string command = GPUFED_BINARY;
  for (const std::string& arg : args) command += " '" + arg + "'";
  command += " 2>&1";
  Process run;
  FILE* pipe = ::popen(command.c_str(), "r");  // NOLINT(cert-env33-c): the test's own binary
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer{};
  for (size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) run.output.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

class AuditStore : public pg::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    store_ = "host=" + server().socket_dir + " port=" + server().port + " user=gpufed dbname=" + database() +
             " passfile=" + server().passfile;
    std::ofstream(dir_.path() / "signing.pub") << signer_.PublicKeyPem();
    // A controller's journal over two runs, kept in the table.
    for (int run = 0; run < 2; ++run) {
      audit::JournalOptions o;
      o.env = env_.get();
      o.controller_id = "store-ctl";
      o.signer = &signer_;
      auto journal = audit::AuditJournal::OpenWith(
          o, std::make_unique<pgjournal::PgJournalStorage>(Connect(), pgjournal::PgJournalStorageOptions{}));
      ASSERT_TRUE(journal.ok()) << journal.status().ToString();
      ASSERT_TRUE((*journal)->Append({audit::RecordKind::kControllerStart, {{"run", run}}}).ok());
      for (int i = 0; i < 40; ++i) {
        ASSERT_TRUE((*journal)
                        ->Append({audit::RecordKind::kDecision,
                                  {{"workload", "w" + std::to_string(i)}, {"tenant", i % 2 ? "a" : "b"}}})
                        .ok());
      }
      ASSERT_TRUE((*journal)->Append({audit::RecordKind::kControllerStop, {{"run", run}}}).ok());
      ASSERT_TRUE((*journal)->Close().ok());
    }
  }
  std::string pub() const { return (dir_.path() / "signing.pub").string(); }

  std::unique_ptr<audit::Env> env_ = audit::NewPosixEnv();
  audit::Signer signer_ = audit::Signer::Generate().value();
  testutil::TempDir dir_;
  std::string store_;
};

TEST_F(AuditStore, VerifyAndQueryReadTheTableAndTheExportVerifiesTheSame) {
  Process verified = Gpufed({"audit", "verify", "--store", store_, "--key", pub(), "--require-closed"});
  EXPECT_EQ(verified.exit_code, 0) << verified.output;
  EXPECT_EQ(verified.output.rfind("OK: ", 0), 0u) << verified.output;

  Process query = Gpufed({"audit", "query", "--store", store_, "--tenant", "a", "--kind", "decision", "-o", "jsonl"});
  EXPECT_EQ(query.exit_code, 0) << query.output;
  std::istringstream lines(query.output);
  int decisions = 0;
  for (std::string line; std::getline(lines, line);) decisions += line.find("\"tenant\":\"a\"") != std::string::npos;
  EXPECT_EQ(decisions, 40);  // 20 per run

  const std::string out = (dir_.path() / "export").string();
  Process exported = Gpufed({"audit", "export", "--store", store_, "--out", out, "--segment-bytes", "20000"});
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  Process from_folder = Gpufed({"audit", "verify", out, "--key", pub(), "--require-closed"});
  EXPECT_EQ(from_folder.exit_code, 0) << from_folder.output;
  // Records, signatures, log, tree size and root: the same words for both.
  EXPECT_EQ(FirstLine(from_folder.output), FirstLine(verified.output));
  // The report and the chargeback read the same records from either backend.
  for (const std::vector<std::string>& report :
       {std::vector<std::string>{"audit", "report", "-f", "json"},
        std::vector<std::string>{"audit", "report", "--chargeback", "-f", "csv"}}) {
    std::vector<std::string> table = report, folder = report;
    table.insert(table.end(), {"--store", store_, "-d", out});
    folder.insert(folder.end(), {"-d", out});
    Process from_table = Gpufed(table), from_export = Gpufed(folder);
    EXPECT_EQ(from_table.exit_code, from_export.exit_code) << from_table.output;
    EXPECT_EQ(from_table.output, from_export.output);
    EXPECT_FALSE(from_table.output.empty());
  }
  // An export never writes into a journal.
  EXPECT_NE(Gpufed({"audit", "export", "--store", store_, "--out", out}).exit_code, 0);
}

TEST_F(AuditStore, AChangedRowFailsVerificationAtItsSeq) {
  auto admin = ConnectAsAdmin();
  ASSERT_TRUE(admin->Exec("tamper", "ALTER TABLE gpufed_journal DISABLE TRIGGER USER").ok());
  ASSERT_TRUE(
      admin->Exec("tamper", "UPDATE gpufed_journal SET line = replace(line, '\"w7\"', '\"w8\"') WHERE seq = 17").ok());
  Process verified = Gpufed({"audit", "verify", "--store", store_, "--key", pub()});
  EXPECT_EQ(verified.exit_code, 1) << verified.output;
  EXPECT_EQ(verified.output.rfind("FAILED at seq 17", 0), 0u) << verified.output;
}

TEST_F(AuditStore, AConnectionStringWithAPasswordIsRefusedAndNotRepeated) {
  const std::string secret = "hunter2-not-echoed";
  Process refused = Gpufed({"audit", "verify", "--store", store_ + " password=" + secret});
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_EQ(refused.output.find(secret), std::string::npos) << refused.output;
  Process query = Gpufed({"audit", "query", "--store", "postgresql://gpufed:" + secret + "@127.0.0.1/x"});
  EXPECT_NE(query.exit_code, 0);
  EXPECT_EQ(query.output.find(secret), std::string::npos) << query.output;
  // Neither a folder and --store, nor neither.
  EXPECT_EQ(Gpufed({"audit", "verify", dir_.str(), "--store", store_}).exit_code, 2);
  EXPECT_EQ(Gpufed({"audit", "verify"}).exit_code, 2);
}

// A federation of two simulated clusters and one wave of work that fits at once: the
// first pass places every workload and nothing waits on another's end, so the decisions
// do not depend on when passes run. (A `run --store` is a replica on the wall clock: a
// term may not run a virtual clock that another replica would continue, so the store's
// run and the file run's virtual time agree only where timing cannot matter.)
constexpr std::string_view kFleet = R"yaml(apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: lyon}
spec:
  provider: onprem
  region: eu-west
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: a100, count: 1, cpu: 32, memory: 256Gi, gpu: {model: A100-40GB, count: 4, memory: 40Gi}}
  pricing: {currency: EUR, gpuHour: {A100-40GB: "0.80"}}
---
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: paris}
spec:
  provider: onprem
  region: eu-west
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: a100, count: 2, cpu: 32, memory: 256Gi, gpu: {model: A100-40GB, count: 4, memory: 40Gi}}
  pricing: {currency: EUR, gpuHour: {A100-40GB: "1.60"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: genomics}
spec:
  quota: {maxGpus: 64}
  budget: {period: monthly, limit: "50000 EUR"}
)yaml";

std::string WorkloadYaml(const std::string& name, int gpus, const std::string& data) {
  return "---\napiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: " + name +
         "}\nspec:\n  tenant: genomics\n  resources: {gpus: " + std::to_string(gpus) + "}\n  durationHint: 2s\n" + data;
}

class RunOnStore : public pg::testing::PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    store_ = "host=" + server().socket_dir + " port=" + server().port + " user=gpufed dbname=" + database() +
             " passfile=" + server().passfile;
    const std::filesystem::path repo = dir_.path() / "repo";
    std::filesystem::create_directories(repo / "workloads");
    std::ofstream(repo / "fleet.yaml") << kFleet;
    std::ofstream(repo / "workloads" / "wave.yaml")
        << WorkloadYaml("align-a", 2, "") << WorkloadYaml("align-b", 2, "") << WorkloadYaml("assemble", 4, "")
        << WorkloadYaml("variants", 1, "  data: {dataset: cohort, sensitivity: restricted}\n");
    const std::string git = "git -C '" + repo.string() + "' ";
    ASSERT_EQ(std::system(
                  (git + "init -q && " + git + "add -A && " + git + "-c user.email=t@t -c user.name=t commit -qm fleet")
                      .c_str()),
              0);
    Process key = Gpufed({"audit", "keygen", "--out", Path("key")});
    ASSERT_EQ(key.exit_code, 0) << key.output;
  }
  std::string Path(const std::string& name) const { return (dir_.path() / name).string(); }

  // "workload outcome cluster" of every decision the query prints, in journal order.
  static std::vector<std::string> Decisions(const Process& query) {
    std::vector<std::string> out;
    std::istringstream lines(query.output);
    for (std::string line; std::getline(lines, line);) {
      nlohmann::json r = nlohmann::json::parse(line, nullptr, false);
      if (r.is_discarded() || r.value("kind", "") != "decision") continue;
      std::string cluster = r.contains("target") ? r["target"].value("cluster", "") : "";
      out.push_back(r.value("workload", "?") + " " + r.value("outcome", "?") + " " + cluster);
    }
    return out;
  }

  testutil::TempDir dir_;
  std::string store_;
};

TEST_F(RunOnStore, FileAndStoreRunsDecideTheSameAndBothReplay) {
  Process file_run = Gpufed({"run", "-c", Path("repo"), "--state", Path("file-state"), "--audit-key",
                             Path("key") + "/signing.key", "--until-idle"});
  ASSERT_EQ(file_run.exit_code, 0) << file_run.output;
  Process store_run = Gpufed({"run", "-c", Path("repo"), "--state", Path("store-state"), "--audit-key",
                              Path("key") + "/signing.key", "--store", store_, "--until-idle", "--replica", "only"});
  ASSERT_EQ(store_run.exit_code, 0) << store_run.output;
  // Under --store no snapshot is left in the replica's folder: they are the database's.
  EXPECT_FALSE(std::filesystem::exists(Path("store-state") + "/audit/snapshots"));
  EXPECT_TRUE(std::filesystem::exists(Path("file-state") + "/audit/snapshots"));

  const std::string file_audit = Path("file-state") + "/audit";
  Process from_files = Gpufed({"audit", "query", "-d", file_audit, "--kind", "decision", "-o", "jsonl"});
  Process from_table = Gpufed({"audit", "query", "--store", store_, "--kind", "decision", "-o", "jsonl"});
  ASSERT_EQ(from_files.exit_code, 0) << from_files.output;
  ASSERT_EQ(from_table.exit_code, 0) << from_table.output;
  std::vector<std::string> file_decisions = Decisions(from_files), store_decisions = Decisions(from_table);
  ASSERT_EQ(file_decisions.size(), 4u) << from_files.output;
  EXPECT_EQ(store_decisions, file_decisions) << from_table.output;

  // Replay: each backend's journal with its own snapshots; --store alone, no folder.
  Process file_replay = Gpufed({"audit", "replay", "--all", "-d", file_audit});
  Process store_replay = Gpufed({"audit", "replay", "--all", "--store", store_});
  EXPECT_EQ(file_replay.exit_code, 0) << file_replay.output;
  EXPECT_EQ(store_replay.exit_code, 0) << store_replay.output;
  EXPECT_NE(file_replay.output.find("replayed 4 decisions: 4 same, 0 different"), std::string::npos)
      << file_replay.output;
  EXPECT_EQ(store_replay.output, file_replay.output);
  // One decision by its seq, from the table.
  const nlohmann::json first = nlohmann::json::parse(FirstLine(from_table.output), nullptr, false);
  ASSERT_TRUE(first.is_object() && first.contains("seq")) << from_table.output;
  Process one = Gpufed({"audit", "replay", std::to_string(first["seq"].get<uint64_t>()), "--store", store_});
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("SAME outcome"), std::string::npos) << one.output;

  // A proof of that decision from the table, checked offline with the log's key.
  Process proof = Gpufed({"audit", "prove", "--store", store_, "--seq", std::to_string(first["seq"].get<uint64_t>())});
  ASSERT_EQ(proof.exit_code, 0) << proof.output;
  std::ofstream(Path("proof.json")) << proof.output;
  Process checked = Gpufed({"audit", "verify-proof", Path("proof.json"), "--key", Path("key") + "/signing.pub"});
  EXPECT_EQ(checked.exit_code, 0) << checked.output;

  // The report judges the restricted placement under its recorded revision, which it finds
  // through the pass's snapshot in the table (exit 4, "not judged", without it).
  Process report = Gpufed({"audit", "report", "--store", store_, "-f", "json"});
  EXPECT_EQ(report.exit_code, 0) << report.output;
  Process file_report = Gpufed({"audit", "report", "-d", file_audit, "-f", "json"});
  EXPECT_EQ(file_report.exit_code, 0) << file_report.output;

  // A database journalled before it kept snapshots: the objects are in a folder only (a
  // copy of the table's, made here) and the table is empty. --store alone cannot replay
  // or judge; with -d the folder serves what the table lacks.
  const std::string old_audit = Path("old-leader-audit");
  {
    std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
    audit::FileSnapshotStore folder(env.get(), old_audit);
    auto rows =
        Connect()->Exec("copy the objects", "SELECT convert_from(bytes, 'UTF8') AS object FROM gpufed_snapshots");
    ASSERT_TRUE(rows.ok()) << rows.status().ToString();
    for (size_t i = 0; i < rows->size(); ++i) ASSERT_TRUE(folder.Add(*rows->Text(i, "object")).ok());
    ASSERT_TRUE(folder.Sync().ok());
    auto admin = ConnectAsAdmin();
    ASSERT_TRUE(admin->Exec("as if older", "ALTER TABLE gpufed_snapshots DISABLE TRIGGER USER").ok());
    ASSERT_TRUE(admin->Exec("as if older", "DELETE FROM gpufed_snapshots").ok());
  }
  EXPECT_EQ(Gpufed({"audit", "replay", "--all", "--store", store_}).exit_code, 1);
  EXPECT_EQ(Gpufed({"audit", "report", "--store", store_, "-f", "json"}).exit_code, 4);  // not judged
  Process fallback = Gpufed({"audit", "replay", "--all", "--store", store_, "-d", old_audit});
  EXPECT_EQ(fallback.exit_code, 0) << fallback.output;
  EXPECT_EQ(fallback.output, file_replay.output);
  EXPECT_EQ(Gpufed({"audit", "report", "--store", store_, "-d", old_audit, "-f", "json"}).exit_code, 0);
}

}  // namespace
}  // namespace gpufed::cli
