// Views of the workload and cluster JSON, as seen from Lua.
#include <gtest/gtest.h>

#include "policies/runtime/lua_policy.h"
#include "policies/runtime/test_util.h"

namespace gpufed::policy {
namespace {

using testing::Cluster;
using testing::MustLoad;
using testing::Workload;

// Runs `expr` (a Lua expression over w and c) and returns tostring() of its value.
std::string Eval(const std::string& expr) {
  auto file = MustLoad("function filter(w, c) return true, tostring(" + expr + ") end");
  if (!file) return "<load failed>";
  auto verdict = file->Filter(Workload(), Cluster(), {});
  if (!verdict.ok()) return "error: " + verdict.error().message;
  return verdict->reason;
}

TEST(LuaView, ReadsScalarsNestedObjectsAndArrays) {
  EXPECT_EQ(Eval("w.name"), "train-llm");
  EXPECT_EQ(Eval("w.priority"), "7");
  EXPECT_EQ(Eval("math.type(w.priority)"), "integer");
  EXPECT_EQ(Eval("w.ratio"), "0.25");
  EXPECT_EQ(Eval("w.data.pii"), "true");
  EXPECT_EQ(Eval("w.resources.models[1]"), "H100");
  EXPECT_EQ(Eval("w.resources.models[2]"), "A100");
  EXPECT_EQ(Eval("c.pools[2].model"), "A100");
  EXPECT_EQ(Eval("w.labels['cost-center']"), "42");
}

TEST(LuaView, MissingFieldsAndNullAreNil) {
  EXPECT_EQ(Eval("w.nope"), "nil");
  EXPECT_EQ(Eval("w.nothing"), "nil");
  EXPECT_EQ(Eval("w.resources.models[3]"), "nil");
  EXPECT_EQ(Eval("w.resources.models[0]"), "nil");
  EXPECT_EQ(Eval("w.resources.models['1']"), "nil");
  EXPECT_EQ(Eval("w[1]"), "nil");
  EXPECT_EQ(Eval("w.resources.models[1.5]"), "nil");
}

TEST(LuaView, LengthIpairsAndPairs) {
  EXPECT_EQ(Eval("#w.resources.models"), "2");
  EXPECT_EQ(Eval("#c.pools"), "2");
  EXPECT_EQ(Eval("#w"), "0");
  EXPECT_EQ(Eval("(function() local s = '' for i, m in ipairs(w.resources.models) do s = s .. i .. m end return s end)()"),
            "1H1002A100");
  // Object keys come in sorted order, so iteration is deterministic.
  EXPECT_EQ(Eval("(function() local s = '' for k, v in pairs(w.labels) do s = s .. k .. '=' .. v .. ';' end return s end)()"),
            "cost-center=42;team=nlp;");
  EXPECT_EQ(Eval("(function() local n = 0 for k, v in pairs(c.pools) do n = n + k end return n end)()"), "3");
  EXPECT_EQ(Eval("table.concat(w.resources.models, ',')"), "H100,A100");
  EXPECT_EQ(Eval("select('#', table.unpack(w.resources.models))"), "2");
}

TEST(LuaView, ViewsAreReadOnly) {
  for (const char* write : {"w.name = 'x'", "w.resources.gpus = 1", "c.pools[1] = 1",
                            "w.new_field = true", "table.insert(w.resources.models, 'x')",
                            "table.sort(w.resources.models)", "rawset(w, 'name', 'x')",
                            "setmetatable(w, {})", "getmetatable(w).__index = nil"}) {
    auto file = MustLoad(std::string("function admit(w) ") + write + " return true end");
    ASSERT_TRUE(file);
    auto verdict = file->Admit(Workload(), {});
    ASSERT_FALSE(verdict.ok()) << write;
    EXPECT_EQ(verdict.error().kind, HookErrorKind::kRuntime) << write;
  }
  EXPECT_EQ(Eval("getmetatable(w)"), "false");
  EXPECT_EQ(Eval("pcall(rawget, w, 'name')"), "false");
  EXPECT_EQ(Eval("pcall(next, w)"), "false");
}

TEST(LuaView, ToStringAndEqualityAreDeterministic) {
  EXPECT_EQ(Eval("w"), "view(object)");
  EXPECT_EQ(Eval("w.resources.models"), "view(array)");
  EXPECT_EQ(Eval("w.resources == w.resources"), "true");
  EXPECT_EQ(Eval("w.resources == w.data"), "false");
  EXPECT_EQ(Eval("w == c"), "false");
}

TEST(LuaView, StashedViewsAreDeadInLaterCalls) {
  auto file = MustLoad(R"(
local saved, saved_nested
function admit(w)
  if saved then return true, saved.name end
  saved, saved_nested = w, w.resources
  return true, "stashed"
end
function filter(w, c)
  return true, tostring(saved_nested.gpus)
end
function score(w, c) return #saved_nested.models end
)");
  ASSERT_TRUE(file);
  auto first = file->Admit(Workload(), {});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->reason, "stashed");
  auto second = file->Admit(Workload(), {});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().kind, HookErrorKind::kRuntime);
  EXPECT_NE(second.error().message.find("after the hook call"), std::string::npos);
  EXPECT_EQ(second.error().line, 4);
  EXPECT_FALSE(file->Filter(Workload(), Cluster(), {}).ok());
  EXPECT_FALSE(file->Score(Workload(), Cluster(), {}).ok());
}

TEST(LuaView, PairsIteratorRejectsForeignValues) {
  auto file = MustLoad(R"(
function admit(w)
  local next_fn = pairs(w)
  return pcall(next_fn, {}, nil), "x"
end)");
  ASSERT_TRUE(file);
  auto verdict = file->Admit(Workload(), {});
  ASSERT_TRUE(verdict.ok()) << verdict.error().ToString();
  EXPECT_FALSE(verdict->allowed);
}

TEST(LuaView, LargeUnsignedNumbersBecomeFloats) {
  auto file = MustLoad("function score(w, c) return w.big end");
  ASSERT_TRUE(file);
  nlohmann::json w = {{"big", 18446744073709551615ull}};
  auto score = file->Score(w, nlohmann::json::object(), {});
  ASSERT_TRUE(score.ok());
  EXPECT_DOUBLE_EQ(score.value(), 18446744073709551615.0);
}

TEST(LuaView, ArrayAndScalarRootsWork) {
  auto file = MustLoad("function filter(w, c) return #w == 3 and c == 5, tostring(w[3]) end");
  ASSERT_TRUE(file);
  // The roots are objects in practice; arrays become views and scalars plain values.
  auto verdict = file->Filter(nlohmann::json::array({1, 2, "x"}), nlohmann::json(5), {});
  ASSERT_TRUE(verdict.ok()) << verdict.error().ToString();
  EXPECT_EQ(verdict->reason, "x");
}

TEST(LuaView, ManyDistinctNodesAreBoundedPerCall) {
  auto file = MustLoad(R"(
function admit(w)
  local sum = 0
  for i = 1, #w.items do sum = sum + w.items[i].n end
  for i = 1, #w.items do sum = sum + w.items[i].n end  -- same nodes, same slots
  return w.items[40] == w.items[40] and w.items[40] ~= w.items[41], tostring(sum)
end)");
  ASSERT_TRUE(file);
  nlohmann::json w = {{"items", nlohmann::json::array()}};
  for (int i = 0; i < 1000; ++i) w["items"].push_back({{"n", 1}});
  auto verdict = file->Admit(w, {});
  ASSERT_TRUE(verdict.ok()) << verdict.error().ToString();
  EXPECT_TRUE(verdict->allowed);
  EXPECT_EQ(verdict->reason, "2000");
  for (int i = 1000; i < 70000; ++i) w["items"].push_back({{"n", 1}});
  verdict = file->Admit(w, {});
  ASSERT_FALSE(verdict.ok());
  EXPECT_NE(verdict.error().message.find("65536 distinct"), std::string::npos);
  w["items"] = nlohmann::json::array({{{"n", 5}}});
  EXPECT_TRUE(file->Admit(w, {}).ok());
}

}  // namespace
}  // namespace gpufed::policy
