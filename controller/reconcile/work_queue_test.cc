#include "controller/reconcile/work_queue.h"

#include <gtest/gtest.h>

namespace gpufed::reconcile {
namespace {

Duration S(int s) { return Duration::FromSeconds(s); }

TEST(WorkQueue, BacksOffExponentiallyUpToTheCap) {
  WorkQueue q(S(1), S(10));
  EXPECT_TRUE(q.Ready("k", S(0)));
  EXPECT_EQ(q.Backoff("k", S(0)), S(1));
  EXPECT_FALSE(q.Ready("k", S(0)));
  EXPECT_TRUE(q.Ready("k", S(1)));
  EXPECT_EQ(q.Backoff("k", S(1)), S(2));
  EXPECT_EQ(q.Backoff("k", S(3)), S(4));
  EXPECT_EQ(q.Backoff("k", S(7)), S(8));
  EXPECT_EQ(q.Backoff("k", S(15)), S(10));
  EXPECT_EQ(q.Failures("k"), 5);
}

TEST(WorkQueue, ForgetsAKeyAfterSuccessAndKeepsKeysApart) {
  WorkQueue q(S(1), S(10));
  q.Backoff("a", S(0));
  q.Backoff("a", S(0));
  EXPECT_TRUE(q.Ready("b", S(0)));
  q.Forget("a");
  EXPECT_TRUE(q.Ready("a", S(0)));
  EXPECT_EQ(q.Backoff("a", S(0)), S(1));
}

TEST(WorkQueue, ReportsTheNextDueTime) {
  WorkQueue q(S(1), S(60));
  EXPECT_EQ(q.NextDue(S(0)).millis(), 0);
  q.Backoff("a", S(0));
  q.Backoff("b", S(0));
  q.Backoff("b", S(1));
  EXPECT_EQ(q.NextDue(S(0)), S(1));
  EXPECT_EQ(q.NextDue(S(1)), S(3));
}

}  // namespace
}  // namespace gpufed::reconcile
