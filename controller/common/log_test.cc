#include "controller/common/log.h"

#include <gtest/gtest.h>

#include <sstream>

namespace gpufed {
namespace {

TEST(Logger, TextLinesBelowTheLevelAreDropped) {
  std::ostringstream out;
  Logger log(&out, LogLevel::kWarn, LogFormat::kText);
  log.Info("run", "policy revision 1a2b activated");
  log.Warn("run", "cluster onprem is unhealthy: timeout");
  log.Error("connector", "x");
  EXPECT_EQ(out.str(), "gpufed run: cluster onprem is unhealthy: timeout\ngpufed connector: x\n");
  EXPECT_FALSE(log.Enabled(LogLevel::kInfo));
  EXPECT_TRUE(log.Enabled(LogLevel::kError));
}

TEST(Logger, JsonLinesAreOneObjectEachWithTimeLevelAndComponent) {
  std::ostringstream out;
  Logger log(&out, LogLevel::kDebug, LogFormat::kJson, [] { return int64_t{1'795'825'137'222'000}; });
  log.Debug("run", "pass 3");
  log.Warn("connector", "peer says \"no\"\\ and\nforges {\"level\":\"info\"} \xff");
  EXPECT_EQ(
      out.str(),
      "{\"time\":\"2026-11-28T00:18:57.222000Z\",\"level\":\"debug\",\"component\":\"run\",\"message\":\"pass 3\"}\n"
      "{\"time\":\"2026-11-28T00:18:57.222000Z\",\"level\":\"warn\",\"component\":\"connector\",\"message\":"
      "\"peer says \\\"no\\\"\\\\ and forges {\\\"level\\\":\\\"info\\\"} \xef\xbf\xbd\"}\n");
}

TEST(Logger, LevelAndFormatNames) {
  EXPECT_EQ(ParseLogLevel("debug"), LogLevel::kDebug);
  EXPECT_EQ(ParseLogLevel("warn"), LogLevel::kWarn);
  EXPECT_FALSE(ParseLogLevel("WARN").has_value());
  EXPECT_FALSE(ParseLogLevel("warning").has_value());
  EXPECT_EQ(ParseLogFormat("json"), LogFormat::kJson);
  EXPECT_FALSE(ParseLogFormat("yaml").has_value());
  EXPECT_EQ(LogLevelName(LogLevel::kError), "error");
}

}  // namespace
}  // namespace gpufed
