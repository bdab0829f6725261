// `gpufed state backup` of a running controller and `gpufed state restore` into a new
// folder (issue 40): the quickstart federation runs 6 virtual hours and is backed up while
// it runs (its journal open, records appended after the backup); the backup restores
// into a new folder, and a controller started there goes on from where the backup stood
// to idle. Its journal then verifies whole: chained, every checkpoint signed by the
// original key, and closed. Restore never writes over a folder and refuses a backup whose
// files differ from its manifest; secrets stay out unless asked for.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "controller/audit/verify.h"
#include "controller/runtime/state_backup.h"
#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {
namespace {

class StateBackup : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/gpufed_it_state_backup_" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static std::string Repo() { return std::string(GPUFED_SOURCE_DIR) + "/examples/quickstart"; }
  // The App of `gpufed run` on the quickstart, checkpointing after every pass.
  static Status OpenQuickstart(Harness& h, const std::string& state) {
    runtime::AppOptions o;
    o.config_dir = Repo();
    o.state_dir = state;
    o.scenario = Repo() + "/simulation/scenario.yaml";
    o.checkpoint_interval = Duration::FromMillis(1);
    h.stepped_by_app = true;
    return h.OpenApp(o);
  }
  std::string dir_;
};

TEST_F(StateBackup, ARunningControllersBackupRestoresIntoAControllerThatGoesOn) {
  const std::string state = dir_ + "/state", backup = dir_ + "/backup", restored = dir_ + "/restored";
  Duration backed_up_at;
  uint64_t journal_end = 0;
  {
    Harness first;
    ASSERT_TRUE(OpenQuickstart(first, state).ok());
    while (first.clock.Now() < Duration::FromSeconds(int64_t{6} * 3600)) {
      ASSERT_TRUE(first.app->Step().ok());
      first.Step();
    }
    // Running: its journal is open and locked, and a pass has just checkpointed.
    runtime::BackupOptions b;
    b.state_dir = state;
    b.destination = backup;
    b.include_secrets = true;
    b.wait = Duration();
    Result<runtime::BackupSummary> done = runtime::BackupState(b);
    ASSERT_TRUE(done.ok()) << done.status().ToString();
    EXPECT_GT(done->journal_last_seq, 10u);
    journal_end = done->journal_last_seq;
    backed_up_at = first.clock.Now();
    // The controller goes on past the backup, then stops.
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(first.app->Step().ok());
      first.Step();
    }
    ASSERT_TRUE(first.Stop("first controller done").ok());
  }
  EXPECT_TRUE(std::filesystem::exists(backup + "/audit/signing.key"));
  EXPECT_TRUE(std::filesystem::exists(backup + "/admin.token") || !std::filesystem::exists(state + "/admin.token"));

  Result<runtime::BackupSummary> put_back = runtime::RestoreState(backup, restored);
  ASSERT_TRUE(put_back.ok()) << put_back.status().ToString();
  EXPECT_EQ(put_back->journal_last_seq, journal_end);
  // Never over a folder: not the live one, not the one just restored.
  EXPECT_EQ(runtime::RestoreState(backup, state).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(runtime::RestoreState(backup, restored).status().code(), StatusCode::kFailedPrecondition);

  Harness second;
  second.clock.AdvanceTo(backed_up_at);
  ASSERT_TRUE(OpenQuickstart(second, restored).ok());
  ASSERT_TRUE(second.RunUntilIdle().ok());
  ASSERT_TRUE(second.Stop("restored controller done").ok());
  Result<std::vector<store::WorkloadRecord>> all = second.Ctl().store()->List("");
  ASSERT_TRUE(all.ok());
  int succeeded = 0;
  for (const store::WorkloadRecord& r : *all) succeeded += r.state == store::WorkloadState::kSucceeded;
  EXPECT_GE(succeeded, 45) << "the restored controller should finish the day's work";

  // The restored journal: the backup's records, then the second controller's, one chain,
  // every checkpoint signed by the original key, closed.
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  Result<std::string> pub = env->ReadFile(state + "/audit/signing.pub");
  ASSERT_TRUE(pub.ok());
  Result<audit::SignatureVerifier> key = audit::SignatureVerifier::FromPublicKeyPem(*pub);
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  audit::VerifyOptions vo;
  vo.key = &*key;
  Result<audit::VerifyReport> report = audit::VerifyJournalDir(*env, restored + "/audit", vo);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok) << report->error;
  EXPECT_FALSE(report->unclosed);
  EXPECT_GT(report->last_seq, journal_end);
  EXPECT_GT(report->signatures_verified, 1u);
}

TEST_F(StateBackup, SecretsStayOutUnlessAskedAndAChangedFileIsNotRestored) {
  const std::string state = dir_ + "/state", backup = dir_ + "/backup";
  {
    Harness h;
    ASSERT_TRUE(OpenQuickstart(h, state).ok());
    for (int i = 0; i < 5; ++i) {
      ASSERT_TRUE(h.app->Step().ok());
      h.Step();
    }
    ASSERT_TRUE(h.Stop("done").ok());  // a stopped controller's journal ends with its final checkpoint
  }
  runtime::BackupOptions b;
  b.state_dir = state;
  b.destination = backup;
  b.wait = Duration();
  ASSERT_TRUE(runtime::BackupState(b).ok());
  EXPECT_FALSE(std::filesystem::exists(backup + "/audit/signing.key"));
  EXPECT_TRUE(std::filesystem::exists(backup + "/audit/signing.pub"));
  EXPECT_EQ(std::filesystem::status(backup).permissions() & std::filesystem::perms::others_all,
            std::filesystem::perms::none);
  // Into a folder that is not empty: refused, nothing written.
  b.destination = state;
  EXPECT_EQ(runtime::BackupState(b).status().code(), StatusCode::kFailedPrecondition);
  // One changed byte in a ledger: the restore refuses and writes nothing.
  std::string ledger;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(backup + "/connectors")) {
    if (entry.is_regular_file()) ledger = entry.path().string();
  }
  ASSERT_FALSE(ledger.empty());
  std::ofstream(ledger, std::ios::app) << "x";
  Result<runtime::BackupSummary> refused = runtime::RestoreState(backup, dir_ + "/restored");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(refused.status().message().find("differs from the backup's manifest"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/restored"));
  // A folder that is not a backup.
  EXPECT_FALSE(runtime::RestoreState(state, dir_ + "/restored2").ok());
}

}  // namespace
}  // namespace gpufed::testing
