#include <gtest/gtest.h>

#include "controller/ha/elector.h"

namespace gpufed::ha {
namespace {

TEST(ElectorOptions, DefaultsAreTheIssuesAndValid) {
  ElectorOptions options;
  options.identity = "replica-a";
  EXPECT_EQ(options.lease_duration, Duration::FromSeconds(15));
  EXPECT_EQ(options.renew_deadline, Duration::FromSeconds(10));
  EXPECT_EQ(options.retry_period, Duration::FromSeconds(2));
  EXPECT_TRUE(options.Validate().ok());
}

TEST(ElectorOptions, RenewDeadlineMustEndBeforeTheLease) {
  ElectorOptions options;
  options.identity = "replica-a";
  options.renew_deadline = options.lease_duration;
  EXPECT_EQ(options.Validate().code(), StatusCode::kInvalidArgument);
  options.renew_deadline = Duration::FromSeconds(10);
  options.retry_period = Duration::FromSeconds(10);
  EXPECT_EQ(options.Validate().code(), StatusCode::kInvalidArgument);
  options.retry_period = Duration();
  EXPECT_EQ(options.Validate().code(), StatusCode::kInvalidArgument);
}

TEST(ElectorOptions, NeedsAnIdentity) {
  ElectorOptions options;
  EXPECT_EQ(options.Validate().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpufed::ha
