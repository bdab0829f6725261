#include "controller/common/action_key.h"

#include <gtest/gtest.h>

#include <random>

namespace gpufed {
namespace {

TEST(ActionKey, BuildsUidDotAttempt) { EXPECT_EQ(ActionKey("0f3c", 2), "0f3c.a2"); }

TEST(ActionKey, ParsesTheLastAttemptSuffix) {
  auto k = ParseActionKey("job.a7.a12");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->uid, "job.a7");
  EXPECT_EQ(k->attempt, 12);
  for (const char* bad : {"", "uid", ".a1", "uid.a", "uid.ax", "uid.a1x", "uid.a-1", "uid.a1234567890"}) {
    EXPECT_FALSE(ParseActionKey(bad)) << bad;
  }
}

TEST(ActionKey, RoundTripsRandomUids) {
  std::mt19937 rng(20261123);
  const std::string alphabet = "ab.0123-_";
  for (int n = 0; n < 5000; ++n) {
    std::string uid;
    const int len = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < len; ++i) uid += alphabet[rng() % alphabet.size()];
    const int attempt = static_cast<int>(rng() % 1000000);
    auto parsed = ParseActionKey(ActionKey(uid, attempt));
    ASSERT_TRUE(parsed) << uid;
    EXPECT_EQ(parsed->uid, uid);
    EXPECT_EQ(parsed->attempt, attempt);
  }
}

}  // namespace
}  // namespace gpufed
