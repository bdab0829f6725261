#include "controller/cli/run_config_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gpufed::cli {
namespace {

class RunConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/gpufed_run_config_file_" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& text) {
    const std::string path = dir_ + "/gpufed.yaml";
    std::ofstream(path) << text;
    return path;
  }
  std::string dir_;
};

TEST_F(RunConfigFile, EveryKeyBecomesTheFlagItStandsForInTheOrderWritten) {
  const std::string path = Write(
      "# the service's settings\n"
      "repository: /srv/policy\n"
      "state: state\n"
      "listen: 0.0.0.0:8443\n"
      "tls: {cert: tls/server.pem, key: /etc/gpufed/server.key, clientCA: tls/clients-ca.pem}\n"
      "allowPlaintext: false\n"
      "tokens: tokens\n"
      "metricsListen: 127.0.0.1:9464\n"
      "speed: 60\n"
      "maxTime: 2d\n"
      "resync: 5m\n"
      "drainTimeout: 90s\n"
      "checkpointInterval: 30s\n"
      "maxBody: 2MiB\n"
      "log: {level: warn, format: json}\n");
  Result<std::vector<RunFileSetting>> got = ReadRunConfigFile(path);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const RunFileSetting& s : *got) pairs.emplace_back(s.flag, s.value);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"config", "/srv/policy"},
      {"state", dir_ + "/state"},  // relative to the file's folder
      {"listen", "0.0.0.0:8443"},
      {"tls-cert", dir_ + "/tls/server.pem"},
      {"tls-key", "/etc/gpufed/server.key"},
      {"tls-client-ca", dir_ + "/tls/clients-ca.pem"},
      {"allow-plaintext", "false"},
      {"tokens", dir_ + "/tokens"},
      {"metrics-listen", "127.0.0.1:9464"},
      {"speed", "60"},
      {"max-time", "2d"},
      {"resync", "5m"},
      {"drain-timeout", "90s"},
      {"checkpoint-interval", "30s"},
      {"max-body", "2MiB"},
      {"log-level", "warn"},
      {"log-format", "json"},
  };
  EXPECT_EQ(pairs, want);
  EXPECT_EQ((*got)[2].where, path + ":4:9: listen");
}

TEST_F(RunConfigFile, EveryBadKeyAndValueIsNamedWithItsLine) {
  const std::string path = Write(
      "repository: /srv/policy\n"
      "listn: 127.0.0.1:8080\n"
      "speed: fast\n"
      "resync: 5 minutes\n"
      "allowPlaintext: yes\n"
      "log: {level: verbose}\n");
  Result<std::vector<RunFileSetting>> got = ReadRunConfigFile(path);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  const std::string& m = got.status().message();
  EXPECT_NE(m.find(path + ":2:"), std::string::npos) << m;  // the unknown key
  EXPECT_NE(m.find("listen"), std::string::npos) << m;      // suggested
  EXPECT_NE(m.find(path + ":3:8: error: speed:"), std::string::npos) << m;
  EXPECT_NE(m.find(path + ":4:9: error: resync:"), std::string::npos) << m;
  EXPECT_NE(m.find(path + ":5:17: error: allowPlaintext:"), std::string::npos) << m;  // YAML 1.2: yes is a string
  EXPECT_NE(m.find(path + ":6:14: error: log.level:"), std::string::npos) << m;
}

TEST_F(RunConfigFile, AFileThatIsNotASettingsMappingIsRefused) {
  for (const char* text : {"", "- a\n- b\n", "a: [\n", "repository: /srv\n---\nstate: /x\n", ",\n"}) {
    Result<std::vector<RunFileSetting>> got = ReadRunConfigFile(Write(text));
    EXPECT_FALSE(got.ok()) << "'" << text << "'";
    if (!got.ok()) {
      EXPECT_NE(got.status().message().find("gpufed.yaml"), std::string::npos) << got.status().message();
    }
  }
  Result<std::vector<RunFileSetting>> missing = ReadRunConfigFile(dir_ + "/absent.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--config-file"), std::string::npos) << missing.status().message();
}

TEST_F(RunConfigFile, ALargeFileIsRefusedBeforeItIsParsed) {
  std::string text = "repository: /srv/policy\n";
  while (text.size() <= (size_t{1} << 20)) text += "# padding padding padding padding padding padding padding\n";
  Result<std::vector<RunFileSetting>> got = ReadRunConfigFile(Write(text));
  EXPECT_FALSE(got.ok());
}

TEST_F(RunConfigFile, TheAuditKeyCredentialIsUsedOnlyWhenTheServiceManagerPassedIt) {
  EXPECT_EQ(AuditKeyCredential(nullptr), "");
  EXPECT_EQ(AuditKeyCredential(""), "");
  EXPECT_EQ(AuditKeyCredential(dir_.c_str()), "") << "a credentials folder without the key";
  std::ofstream(dir_ + "/audit-signing.key") << "key";
  EXPECT_EQ(AuditKeyCredential(dir_.c_str()), dir_ + "/audit-signing.key");
  // A symlink is returned too: opening it is refused (O_NOFOLLOW), with the path named,
  // rather than the start silently falling back to a key in the state folder.
  std::filesystem::remove(dir_ + "/audit-signing.key");
  std::filesystem::create_symlink("/nonexistent", dir_ + "/audit-signing.key");
  EXPECT_EQ(AuditKeyCredential(dir_.c_str()), dir_ + "/audit-signing.key");
}

}  // namespace
}  // namespace gpufed::cli
