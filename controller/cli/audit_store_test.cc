// The gpufed binary against the journal in PostgreSQL (the pg_cluster fixture, a database
// per test): `audit verify|query|report --store` read the table, `audit export` writes
// a folder that `audit verify DIR` verifies (and `report` reports) the same, a changed row fails
// verification, and a connection string with a password is refused without being echoed.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gpufed::cli
