#include "controller/placement/matcher.h"

#include <gtest/gtest.h>

namespace gpufed::placement {
namespace {

model::Condition Cond(const std::string& path, model::MatchOp op, nlohmann::json operand) {
  model::Condition c;
  c.path = path;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    c.segments.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  c.op = op;
  c.operand = std::move(operand);
  return c;
}

const nlohmann::json kView = {
    {"zone", "eu"},
    {"onprem", true},
    {"gpu", {{"memory", 85899345920}}},
    {"certifications", {"iso27001", "c5"}},
    {"residency", {"eu"}},
    {"empty", ""},
};

TEST(Matcher, EqualsComparesScalarsLeniently) {
  EXPECT_TRUE(ConditionHolds(Cond("zone", model::MatchOp::kEquals, "eu"), kView));
  EXPECT_FALSE(ConditionHolds(Cond("zone", model::MatchOp::kEquals, "us"), kView));
  EXPECT_TRUE(ConditionHolds(Cond("onprem", model::MatchOp::kEquals, true), kView));
  EXPECT_TRUE(ConditionHolds(Cond("onprem", model::MatchOp::kEquals, "true"), kView));
  EXPECT_FALSE(ConditionHolds(Cond("missing", model::MatchOp::kEquals, "x"), kView));
}

TEST(Matcher, InAndNotInOnScalarsAndLists) {
  EXPECT_TRUE(ConditionHolds(Cond("zone", model::MatchOp::kIn, {"eu", "ch"}), kView));
  EXPECT_FALSE(ConditionHolds(Cond("zone", model::MatchOp::kIn, {"us"}), kView));
  EXPECT_TRUE(ConditionHolds(Cond("residency", model::MatchOp::kIn, {"eu"}), kView));
  EXPECT_TRUE(ConditionHolds(Cond("zone", model::MatchOp::kNotIn, {"us"}), kView));
  EXPECT_TRUE(ConditionHolds(Cond("missing", model::MatchOp::kNotIn, {"us"}), kView));
}

TEST(Matcher, ComparesQuantities) {
  EXPECT_TRUE(ConditionHolds(Cond("gpu.memory", model::MatchOp::kGte, "80Gi"), kView));
  EXPECT_FALSE(ConditionHolds(Cond("gpu.memory", model::MatchOp::kGt, "80Gi"), kView));
  EXPECT_TRUE(ConditionHolds(Cond("gpu.memory", model::MatchOp::kLt, 1e12), kView));
}

TEST(Matcher, ContainsAndExists) {
  EXPECT_TRUE(ConditionHolds(Cond("certifications", model::MatchOp::kContains, "c5"), kView));
  EXPECT_FALSE(ConditionHolds(Cond("certifications", model::MatchOp::kContainsAll, {"c5", "soc2"}), kView));
  EXPECT_TRUE(ConditionHolds(Cond("zone", model::MatchOp::kExists, true), kView));
  EXPECT_TRUE(ConditionHolds(Cond("empty", model::MatchOp::kExists, false), kView));
}

TEST(Matcher, DescribesFailures) {
  EXPECT_EQ(DescribeFailure(Cond("zone", model::MatchOp::kIn, {"us"}), kView), "requires zone in [\"us\"], is \"eu\"");
}

}  // namespace
}  // namespace gpufed::placement
