#include "policies/engine/hook_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "controller/config/loader.h"

namespace gpufed::policy {
namespace {

using ::testing::HasSubstr;

model::Config ConfigWith(const std::string& enforcement, const std::string& lua, double weight = 1) {
  model::Config config;
  model::Policy p;
  p.metadata.name = "p";
  p.enforcement = enforcement == "deny" ? model::Enforcement::kDeny : model::Enforcement::kWarn;
  p.lua_files = {"rules/p.lua"};
  p.weights = model::ScoringWeights{};
  p.weights->lua = weight;
  config.policies = {p};
  config.lua_sources["rules/p.lua"] = lua;
  return config;
}

const nlohmann::json kWorkload = {{"name", "w"}, {"tenant", "t"}, {"priority", 100}};
const nlohmann::json kCluster = {{"name", "c"}, {"onprem", false}};

TEST(HookSet, CompileErrorsNamePolicyFileAndLine) {
  model::Config config = ConfigWith("deny", "function admit(w)\n  return (\nend\n");
  Result<std::unique_ptr<HookSet>> set = HookSet::Compile(config);
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("policy 'p' (rules/p.lua:3)"));
}

TEST(HookSet, DenyPolicyDecidesAndWarnPolicyOnlyReports) {
  const char* lua = "function filter(w, c) if c.onprem then return true end return false, 'cloud is off' end";
  auto deny = HookSet::Compile(ConfigWith("deny", lua));
  ASSERT_TRUE(deny.ok());
  std::vector<placement::HookOutcome> out = (*deny)->Filter(kWorkload, kCluster, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].allowed);
  EXPECT_TRUE(out[0].enforced);
  EXPECT_EQ(out[0].reason, "cloud is off");
  auto warn = HookSet::Compile(ConfigWith("warn", lua));
  ASSERT_TRUE(warn.ok());
  EXPECT_FALSE((*warn)->Filter(kWorkload, kCluster, 0)[0].enforced);
}

TEST(HookSet, ErrorsAreReportedWithLine) {
  auto set = HookSet::Compile(ConfigWith("deny", "function admit(w)\n  error('no')\nend\n"));
  ASSERT_TRUE(set.ok());
  std::vector<placement::HookOutcome> out = (*set)->Admit(kWorkload, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].error);
  EXPECT_THAT(out[0].reason, HasSubstr("rules/p.lua:2"));
}

TEST(HookSet, ScoresAreWeightedAndErrorsDropTheTerm) {
  auto set = HookSet::Compile(ConfigWith("deny", "function score(w, c) return w.priority / 10 end", 0.5));
  ASSERT_TRUE(set.ok());
  std::vector<std::string> errors;
  EXPECT_DOUBLE_EQ((*set)->Score(kWorkload, kCluster, 0, errors), 5.0);
  EXPECT_TRUE(errors.empty());
  auto bad = HookSet::Compile(ConfigWith("deny", "function score(w, c) return 0/0 end"));
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ((*bad)->Score(kWorkload, kCluster, 0, errors), 0);
  ASSERT_EQ(errors.size(), 1u);
}

TEST(HookSet, NowComesFromTheSnapshot) {
  auto set = HookSet::Compile(ConfigWith("deny", "function admit(w) return now() < 100, 'too late' end"));
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE((*set)->Admit(kWorkload, 99)[0].allowed);
  EXPECT_FALSE((*set)->Admit(kWorkload, 100)[0].allowed);
}

}  // namespace
}  // namespace gpufed::policy
