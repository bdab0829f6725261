#include "controller/config/yaml_field.h"

#include <gtest/gtest.h>

namespace gpufed::config {
namespace {

ScalarKind Kind(const std::string& yaml) { return ClassifyScalar(YAML::Load("v: " + yaml)["v"]); }

TEST(YamlField, ClassifiesScalarsLikeYaml12Core) {
  EXPECT_EQ(Kind("8"), ScalarKind::kInt);
  EXPECT_EQ(Kind("\"8\""), ScalarKind::kString);
  EXPECT_EQ(Kind("1.5"), ScalarKind::kFloat);
  EXPECT_EQ(Kind("true"), ScalarKind::kBool);
  EXPECT_EQ(Kind("yes"), ScalarKind::kString);  // YAML 1.1 booleans are strings in 1.2
  EXPECT_EQ(Kind("~"), ScalarKind::kNull);
  EXPECT_EQ(Kind("80Gi"), ScalarKind::kString);
}

TEST(YamlField, ValidatesNames) {
  EXPECT_TRUE(IsValidName("munich-dgx"));
  EXPECT_TRUE(IsValidName("a.b-1"));
  EXPECT_FALSE(IsValidName("Munich"));
  EXPECT_FALSE(IsValidName("-a"));
  EXPECT_FALSE(IsValidName(std::string(64, 'a')));
}

TEST(YamlField, ReportsUnknownAndDuplicateKeys) {
  Diagnostics diagnostics;
  DocumentContext context{"f.yaml", &diagnostics, nullptr};
  YamlField root = YamlField::Root(YAML::Load("gpus: 1\ngpuz: 2\n"), &context);
  EXPECT_TRUE(root.ExpectObject({"gpus", "cpu"}));
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics.items()[0].ToString(), "f.yaml:2:1: error: gpuz: unknown field 'gpuz' (did you mean 'gpus'?)");
}

}  // namespace
}  // namespace gpufed::config
