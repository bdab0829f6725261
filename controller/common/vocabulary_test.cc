#include "controller/common/vocabulary.h"

#include <gtest/gtest.h>

#include <random>

namespace gpufed {
namespace {

TEST(Vocabulary, ActionKindsRoundTrip) {
  for (ActionKind kind : {ActionKind::kSubmit, ActionKind::kCancel, ActionKind::kPreempt}) {
    Result<ActionKind> parsed = ParseActionKind(ActionKindName(kind));
    ASSERT_TRUE(parsed.ok()) << ActionKindName(kind);
    EXPECT_EQ(*parsed, kind);
  }
  // The texts older ledgers and journals hold.
  EXPECT_STREQ(ActionKindName(ActionKind::kSubmit), "submit");
  EXPECT_STREQ(ActionKindName(ActionKind::kCancel), "cancel");
  EXPECT_STREQ(ActionKindName(ActionKind::kPreempt), "preempt");
}

TEST(Vocabulary, UnknownActionKindIsAnErrorNamingIt) {
  for (const char* bad : {"", "Submit", "launch", "place", "preempted", "submit "}) {
    Result<ActionKind> parsed = ParseActionKind(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("'" + std::string(bad) + "'"), std::string::npos)
        << parsed.status().message();
  }
  // A long hostile text is cut in the message.
  Result<ActionKind> flood = ParseActionKind(std::string(10000, 'x'));
  ASSERT_FALSE(flood.ok());
  EXPECT_LT(flood.status().message().size(), 200u);
}

TEST(Vocabulary, SubmissionUids) {
  EXPECT_EQ(SubmissionUid("train", 7), "train-u7");
  Result<ParsedUid> uid = ParseSubmissionUid("my-u2-job-u12");
  ASSERT_TRUE(uid.ok());
  EXPECT_EQ(uid->name, "my-u2-job");
  EXPECT_EQ(uid->number, 12);
  for (const char* bad :
       {"", "train", "-u1", "train-u", "train-ux", "train-u1x", "train-u-1", "train-u1234567890123456789"}) {
    EXPECT_FALSE(ParseSubmissionUid(bad).ok()) << bad;
  }
}

TEST(Vocabulary, PoolNodeNames) {
  EXPECT_EQ(PoolNodeName("dgx-a100", 3), "dgx-a100-3");
  Result<ParsedNodeName> node = ParsePoolNodeName("dgx-a100-12");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(node->pool, "dgx-a100");
  EXPECT_EQ(node->index, 12);
  for (const char* bad : {"", "gpunode1", "-1", "h100-", "h100-x", "h100-1a", "h100-1234567890"}) {
    Result<ParsedNodeName> parsed = ParsePoolNodeName(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(Vocabulary, JobNames) {
  EXPECT_EQ(AttemptJobName("train", 2), "gpufed-train-a2");
  EXPECT_EQ(std::string(kJobNamePrefix) + "x" + JobNameSuffix(10), AttemptJobName("x", 10));
}

TEST(Vocabulary, RandomNamesRoundTrip) {
  std::mt19937 rng(20261127);
  const std::string alphabet = "ab-u0123._";
  for (int n = 0; n < 5000; ++n) {
    std::string name;
    const int len = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < len; ++i) name += alphabet[rng() % alphabet.size()];
    const int number = static_cast<int>(rng() % 1000000);
    Result<ParsedUid> uid = ParseSubmissionUid(SubmissionUid(name, number));
    ASSERT_TRUE(uid.ok()) << name;
    EXPECT_EQ(uid->name, name);
    EXPECT_EQ(uid->number, number);
    Result<ParsedNodeName> node = ParsePoolNodeName(PoolNodeName(name, number));
    ASSERT_TRUE(node.ok()) << name;
    EXPECT_EQ(node->pool, name);
    EXPECT_EQ(node->index, number);
  }
}

}  // namespace
}  // namespace gpufed
