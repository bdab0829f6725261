#include "controller/common/token_bucket.h"

#include <gtest/gtest.h>

namespace gpufed {
namespace {

Duration S(int64_t s) { return Duration::FromSeconds(s); }
Duration Ms(int64_t ms) { return Duration::FromMillis(ms); }

TEST(TokenBucket, AllowsBurstThenPacesAtQps) {
  TokenBucket bucket(10, 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(bucket.Reserve(S(0), S(1)), Duration());
  EXPECT_EQ(bucket.Reserve(S(0), S(1)), Ms(100));  // the 4th waits one refill
  EXPECT_EQ(bucket.Reserve(S(0), S(1)), Ms(200));
}

TEST(TokenBucket, RefusesWhenWaitExceedsDeadlineAndTakesNothing) {
  TokenBucket bucket(1, 1);
  EXPECT_EQ(bucket.Reserve(S(0), Duration()), Duration());
  EXPECT_EQ(bucket.Reserve(S(0), Ms(500)), std::nullopt);
  EXPECT_EQ(bucket.Reserve(S(1), Duration()), Duration());  // refilled, not borrowed
}

TEST(TokenBucket, RefillsUpToBurstOnly) {
  TokenBucket bucket(100, 2);
  EXPECT_EQ(bucket.Reserve(S(0), Duration()), Duration());
  EXPECT_EQ(bucket.Reserve(S(100), Duration()), Duration());
  EXPECT_EQ(bucket.Reserve(S(100), Duration()), Duration());
  EXPECT_EQ(bucket.Reserve(S(100), Duration()), std::nullopt);
}

TEST(TokenBucket, ZeroQpsIsUnlimited) {
  TokenBucket bucket(0, 1);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(bucket.Reserve(S(0), Duration()), Duration());
}

}  // namespace
}  // namespace gpufed
