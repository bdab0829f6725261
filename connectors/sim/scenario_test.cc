#include "connectors/sim/scenario.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace gpufed::connectors::sim {
namespace {

TEST(Scenario, ParsesSubmissionsAndFailures) {
  Result<Scenario> s = ParseScenario(
      "submissions: [burst.yaml]\n"
      "failures:\n"
      "  - {cluster: a, type: outage, at: 1h, until: 2h}\n"
      "  - {cluster: b, type: node-loss, node: n-1, at: 30m}\n",
      "s.yaml", "/base");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->submissions, std::vector<std::string>{"/base/burst.yaml"});
  ASSERT_EQ(s->FailuresOf("a").size(), 1u);
  EXPECT_EQ(s->FailuresOf("a")[0].until, Duration::FromSeconds(7200));
  EXPECT_EQ(s->FailuresOf("b")[0].node, "n-1");
}

TEST(Scenario, NamesFileLineAndFieldOfABadType) {
  Result<Scenario> s = ParseScenario("failures:\n  - {cluster: a, type: flood, at: 1h}\n", "s.yaml", "");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message().rfind("s.yaml:2:", 0), 0u) << s.status().message();
  EXPECT_NE(s.status().message().find("failures[0].type"), std::string::npos);
}

TEST(Scenario, RejectsAnOutageThatEndsBeforeItStarts) {
  Result<Scenario> s = ParseScenario("failures:\n  - {cluster: a, type: outage, at: 2h, until: 1h}\n", "s.yaml", "");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("until"), std::string::npos);
}

TEST(Scenario, RejectsUnknownFields) { EXPECT_FALSE(ParseScenario("failure: []\n", "s.yaml", "").ok()); }

TEST(Scenario, ASyntaxErrorNamesFileLineAndColumn) {
  Result<Scenario> s = ParseScenario("submissions: [a.yaml\nfailures: []\n", "s.yaml", "");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message().rfind("s.yaml:2:9: ", 0), 0u) << s.status().message();
  EXPECT_FALSE(ParseScenario("submissions: []\n---\nfailures: []\n", "s.yaml", "").ok());  // one document
}

TEST(Scenario, AnEmptyFileOrListsMeanNothingHappens) {
  for (const char* text : {"", "# nothing\n", "submissions:\nfailures:\n"}) {
    Result<Scenario> s = ParseScenario(text, "s.yaml", "");
    ASSERT_TRUE(s.ok()) << text << ": " << s.status().message();
    EXPECT_TRUE(s->submissions.empty());
    EXPECT_TRUE(s->failures.empty());
  }
}

// A Cluster's `scenario:` comes from a Git commit: a file that is not one, or is far too
// large, is refused by name before it is read whole.
TEST(Scenario, AFileTooLargeOrNotAFileIsRefusedByName) {
  const std::filesystem::path big =
      std::filesystem::temp_directory_path() / ("gpufed-scenario-" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream out(big, std::ios::binary);
    out << "submissions: []\n# " << std::string((size_t{16} << 20) + 1, 'x') << "\n";
  }
  Result<Scenario> huge = LoadScenario(big.string());
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(huge.status().message().rfind(big.string() + ": scenario: file is", 0), 0u) << huge.status().message();
  std::filesystem::remove(big);
  EXPECT_EQ(LoadScenario("/dev/zero").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LoadScenario("/nonexistent/s.yaml").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace gpufed::connectors::sim
