#include "connectors/http/peer_log.h"

#include <gtest/gtest.h>

#include <vector>

namespace gpufed::connectors::http {
namespace {

TEST(PeerLog, LogsTheFirstFailureOfAnEpisodeAndTheRecovery) {
  std::vector<std::string> lines;
  PeerLog log("https://api:6443", [&](LogLevel, const std::string& line) { lines.push_back(line); });
  log.Succeeded();  // nothing to recover from
  EXPECT_TRUE(lines.empty());
  log.Failed("TLS: certificate verify failed");
  log.Failed("TLS: certificate verify failed");  // the retry loop's next tries
  log.Failed("timed out");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "https://api:6443 refused: TLS: certificate verify failed");
  EXPECT_TRUE(log.failing());
  log.Succeeded();
  log.Succeeded();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "https://api:6443 answers again");
  log.Failed("reply larger than 10 bytes");  // a new episode
  EXPECT_EQ(lines.size(), 3u);
}

}  // namespace
}  // namespace gpufed::connectors::http
