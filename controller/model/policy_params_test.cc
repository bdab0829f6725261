#include "controller/model/policy_params.h"

#include <gtest/gtest.h>

namespace gpufed::model {
namespace {

ParamSpec Spec(ParamType type, std::optional<double> min = std::nullopt) {
  ParamSpec s;
  s.name = "x";
  s.type = type;
  s.keys = "priority class";
  s.min = min;
  return s;
}

TEST(PolicyParams, EachTypeTakesItsValuesAndNamesWhatIsWrong) {
  using nlohmann::json;
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kBoolean), true), "");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kBoolean), "yes"), "expected true or false, got the string \"yes\"");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kNumber), 1.5), "");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kNumber), "1.00"),
            "expected a number, got the string \"1.00\" (write 1.00 without quotes)");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kNumber), "cheap"), "expected a number, got the string \"cheap\"");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kNumber, 0), -2), "expected a number of at least 0, got -2");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kString), 3), "expected a string, got the number 3");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kCurrency), ""), "");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kCurrency), "USD"), "");
  EXPECT_NE(ParamMismatch(Spec(ParamType::kCurrency), "usd"), "");
  EXPECT_NE(ParamMismatch(Spec(ParamType::kCurrency), "EURO"), "");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kStringList), json::array({"eu", "ch"})), "");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kStringList), json::array({"eu", 3})),
            "[1]: expected a string, got the number 3");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kStringList), "eu"), "expected a list of strings, got the string \"eu\"");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kNumberMap, 0), json{{"low", 1.0}, {"normal", 4}}), "");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kNumberMap, 0), json{{"low", "1.00"}}),
            "low: expected a number, got the string \"1.00\" (write 1.00 without quotes)");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kNumberMap), json::array()),
            "expected a mapping of priority class to values, got a list");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kStringListMap), json{{"confidential", {"eu"}}}), "");
  EXPECT_EQ(ParamMismatch(Spec(ParamType::kStringListMap), json{{"confidential", {"eu", 1}}}),
            "confidential[1]: expected a string, got the number 1");
}

TEST(PolicyParams, TypeNamesAreHowTypeIsWritten) {
  ASSERT_EQ(ParamTypeNames().size(), 7u);
  EXPECT_EQ(ParamTypeName(ParamType::kStringListMap), "map of list of string");
  EXPECT_EQ(ParamTypeNames()[static_cast<size_t>(ParamType::kCurrency)], "currency");
}

}  // namespace
}  // namespace gpufed::model
