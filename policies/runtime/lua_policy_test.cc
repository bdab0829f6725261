#include "policies/runtime/lua_policy.h"

#include <gtest/gtest.h>

#include <cmath>

#include "policies/runtime/test_util.h"

namespace gpufed::policy {
namespace {

using testing::Cluster;
using testing::MustFailLoad;
using testing::MustLoad;
using testing::Workload;

TEST(LuaPolicyFile, AdmitReturnsVerdictAndReason) {
  auto file = MustLoad(R"(
function admit(w)
  if w.resources.gpus > 4 then return false, "too many gpus: " .. w.resources.gpus end
  return true
end)");
  ASSERT_TRUE(file);
  EXPECT_TRUE(file->has_admit());
  EXPECT_FALSE(file->has_filter());
  EXPECT_FALSE(file->has_score());
  auto verdict = file->Admit(Workload(), {});
  ASSERT_TRUE(verdict.ok()) << verdict.error().ToString();
  EXPECT_FALSE(verdict->allowed);
  EXPECT_EQ(verdict->reason, "too many gpus: 8");
  auto small = Workload();
  small["resources"]["gpus"] = 2;
  verdict = file->Admit(small, {});
  ASSERT_TRUE(verdict.ok());
  EXPECT_TRUE(verdict->allowed);
  EXPECT_EQ(verdict->reason, "");
}

TEST(LuaPolicyFile, FilterAndScoreSeeWorkloadAndCluster) {
  auto file = MustLoad(R"(
function filter(w, c)
  if w.data.residency ~= c.zone then return false, "residency" end
  return true, "ok"
end
function score(w, c) return c.free_gpus - w.resources.gpus + c.price_per_gpu_hour end
)");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->defined_hooks(), (std::set<std::string>{"filter", "score"}));
  auto verdict = file->Filter(Workload(), Cluster(), {});
  ASSERT_TRUE(verdict.ok()) << verdict.error().ToString();
  EXPECT_TRUE(verdict->allowed);
  EXPECT_EQ(verdict->reason, "ok");
  auto score = file->Score(Workload(), Cluster(), {});
  ASSERT_TRUE(score.ok()) << score.error().ToString();
  EXPECT_DOUBLE_EQ(score.value(), 10.5);
}

TEST(LuaPolicyFile, PolicyParamsArriveAsTheLastArgument) {
  auto file = MustLoad(R"(
function admit(w, p) return w.resources.gpus <= p.maxGpus, "limit " .. p.maxGpus end
function filter(w, c, p) return p.zones[1] == "eu" end
function score(w, c, p)
  if p == nil then return -1 end
  return p.weight
end)");
  ASSERT_TRUE(file);
  nlohmann::json params = {{"maxGpus", 4}, {"zones", {"eu"}}, {"weight", 2.5}};
  HookContext ctx;
  ctx.params = &params;
  auto verdict = file->Admit(Workload(), ctx);
  ASSERT_TRUE(verdict.ok()) << verdict.error().ToString();
  EXPECT_FALSE(verdict->allowed);
  EXPECT_EQ(verdict->reason, "limit 4");
  EXPECT_TRUE(file->Filter(Workload(), Cluster(), ctx)->allowed);
  EXPECT_EQ(file->Score(Workload(), Cluster(), ctx).value(), 2.5);
  EXPECT_EQ(file->Score(Workload(), Cluster(), {}).value(), -1);  // no params: nil
}

TEST(LuaPolicyFile, UndefinedHookIsReported) {
  auto file = MustLoad("function score(w, c) return 1 end");
  ASSERT_TRUE(file);
  auto verdict = file->Admit(Workload(), {});
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.error().kind, HookErrorKind::kNotDefined);
}

TEST(LuaPolicyFile, RuntimeErrorCarriesFileAndLine) {
  auto file = MustLoad("-- line 1\nfunction admit(w)\n  local x = nil\n  return x.y\nend\n");
  ASSERT_TRUE(file);
  auto verdict = file->Admit(Workload(), {});
  ASSERT_FALSE(verdict.ok());
  const HookError& e = verdict.error();
  EXPECT_EQ(e.kind, HookErrorKind::kRuntime);
  EXPECT_EQ(e.policy, "p");
  EXPECT_EQ(e.file, "rules/x.lua");
  EXPECT_EQ(e.line, 4);
  EXPECT_EQ(e.message, "attempt to index a nil value (local 'x')");
  EXPECT_EQ(e.ToString(), "policy 'p' (rules/x.lua:4): attempt to index a nil value (local 'x')");
  EXPECT_EQ(e.ToStatus().code(), StatusCode::kFailedPrecondition);
}

// Lua names no variable for a comparison: the error quotes the line, so the field that was
// nil (w.labels.maxGpus) is in the message.
TEST(LuaPolicyFile, AnErrorWithoutAVariableNameQuotesItsLine) {
  auto file = MustLoad(
      "function admit(w)\n\t  if w.resources.totalGpus > w.labels.maxGpus then return false end  \n"
      "  return true\nend\n");
  ASSERT_TRUE(file);
  auto verdict = file->Admit(Workload(), {});
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.error().line, 2);
  EXPECT_TRUE(verdict.error().message.starts_with("attempt to compare ")) << verdict.error().message;
  EXPECT_TRUE(
      verdict.error().message.ends_with(" in: if w.resources.totalGpus > w.labels.maxGpus then return false end"))
      << verdict.error().message;
  // A long line is cut.
  auto wide = MustLoad("function admit(w)\n  return 1 < nil or '" + std::string(300, 'x') + "'\nend\n");
  ASSERT_TRUE(wide);
  auto cut = wide->Admit(Workload(), {});
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().message.find(" in: return 1 < nil or 'xxx"), std::string::npos) << cut.error().message;
  EXPECT_TRUE(cut.error().message.ends_with("xxx...")) << cut.error().message;
  // A policy's own error() says what it means: nothing is added.
  auto own = MustLoad("function admit(w)\n  error('tenant has no cost centre')\nend\n");
  ASSERT_TRUE(own);
  auto raised = own->Admit(Workload(), {});
  ASSERT_FALSE(raised.ok());
  EXPECT_EQ(raised.error().message, "tenant has no cost centre");
}

TEST(LuaPolicyFile, SyntaxErrorIsALoadErrorWithLine) {
  HookError e = MustFailLoad("function admit(w)\n  return true\n\nend end\n");
  EXPECT_EQ(e.kind, HookErrorKind::kLoad);
  EXPECT_EQ(e.line, 4);
  EXPECT_NE(e.message.find("<eof> expected near 'end'"), std::string::npos) << e.message;
  EXPECT_EQ(e.ToStatus().code(), StatusCode::kInvalidArgument);
}

TEST(LuaPolicyFile, BinaryChunksAreRefused) {
  const std::string chunk = std::string("\x1bLua\x54\x00\x19\x93\r\n\x1a\n", 12) + std::string(64, '\0');
  HookError e = MustFailLoad(chunk);
  EXPECT_EQ(e.kind, HookErrorKind::kLoad);
  EXPECT_NE(e.message.find("attempt to load a binary chunk"), std::string::npos) << e.message;
}

TEST(LuaPolicyFile, TopLevelErrorIsALoadError) {
  HookError e = MustFailLoad("local a = 1\nerror('broken config')\n");
  EXPECT_EQ(e.kind, HookErrorKind::kLoad);
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.message, "broken config");
}

TEST(LuaPolicyFile, HookGlobalsMustBeFunctions) {
  HookError e = MustFailLoad("admit = 42\n");
  EXPECT_EQ(e.kind, HookErrorKind::kLoad);
  EXPECT_NE(e.message.find("global 'admit' must be a function, got number"), std::string::npos);
}

TEST(LuaPolicyFile, LongPathsAreStrippedFromMessages) {
  const std::string path(120, 'd');
  auto loaded = LuaPolicyFile::Load("p", path + "/rule.lua", "function admit(w)\n error('boom')\nend");
  ASSERT_TRUE(loaded.ok());
  auto verdict = loaded.value()->Admit(Workload(), {});
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.error().message, "boom");
  EXPECT_EQ(verdict.error().line, 2);
  EXPECT_EQ(verdict.error().file, path + "/rule.lua");
}

TEST(LuaPolicyFile, WrongReturnTypesAreBadReturns) {
  auto file = MustLoad(R"(
function admit(w) return "yes" end
function filter(w, c) end
function score(w, c)
  if w.name == "nan" then return 0/0 end
  if w.name == "inf" then return 1/0 end
  if w.name == "-inf" then return -1/0 end
  if w.name == "int" then return 3 end
  return "high"
end)");
  ASSERT_TRUE(file);
  auto admit = file->Admit(Workload(), {});
  ASSERT_FALSE(admit.ok());
  EXPECT_EQ(admit.error().kind, HookErrorKind::kBadReturn);
  EXPECT_EQ(admit.error().line, 2);
  EXPECT_EQ(admit.error().message, "admit must return a boolean, got string");
  auto filter = file->Filter(Workload(), Cluster(), {});
  ASSERT_FALSE(filter.ok());
  EXPECT_EQ(filter.error().message, "filter must return a boolean, got nil");
  auto score = file->Score(Workload(), Cluster(), {});
  ASSERT_FALSE(score.ok());
  EXPECT_EQ(score.error().message, "score must return a number, got string");
  for (std::string name : {"nan", "inf", "-inf"}) {
    auto w = Workload();
    w["name"] = name;
    auto s = file->Score(w, Cluster(), {});
    ASSERT_FALSE(s.ok()) << name;
    EXPECT_EQ(s.error().kind, HookErrorKind::kBadReturn);
    EXPECT_NE(s.error().message.find(name == "nan" ? "NaN" : name), std::string::npos);
  }
  auto w = Workload();
  w["name"] = "int";
  auto s = file->Score(w, Cluster(), {});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.value(), 3.0);
}

TEST(LuaPolicyFile, FilterMayDenyPoolsWithAThirdValue) {
  auto file = MustLoad(R"(
function filter(w, c)
  if w.name == "pools" then return true, nil, {zeta = "dear", alpha = "far"} end
  if w.name == "denied" then return false, "no", {alpha = "ignored"} end
  if w.name == "list" then return true, nil, {"alpha"} end
  if w.name == "number" then return true, nil, {alpha = 3} end
  if w.name == "string" then return true, nil, "alpha" end
  if w.name == "many" then
    local t = {}
    for i = 1, 300 do t["p" .. i] = "x" end
    return true, nil, t
  end
  return true
end)");
  ASSERT_TRUE(file);
  auto named = [](const std::string& name) {
    auto w = Workload();
    w["name"] = name;
    return w;
  };
  auto pools = file->Filter(named("pools"), Cluster(), {});
  ASSERT_TRUE(pools.ok()) << pools.error().ToString();
  EXPECT_TRUE(pools->allowed);
  using Denials = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(pools->denied_pools, (Denials{{"alpha", "far"}, {"zeta", "dear"}}));  // in name order
  auto denied = file->Filter(named("denied"), Cluster(), {});
  ASSERT_TRUE(denied.ok());
  EXPECT_FALSE(denied->allowed);
  EXPECT_TRUE(denied->denied_pools.empty());
  EXPECT_TRUE(file->Filter(named("plain"), Cluster(), {})->denied_pools.empty());
  for (const char* bad : {"list", "number", "string", "many"}) {
    auto r = file->Filter(named(bad), Cluster(), {});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().kind, HookErrorKind::kBadReturn) << bad;
    EXPECT_NE(r.error().message.find("filter's third value must be a table of pool name = reason strings"),
              std::string::npos)
        << r.error().message;
  }
  // admit's third value is not looked at.
  auto admit = MustLoad("function admit(w) return true, nil, 42 end");
  ASSERT_TRUE(admit);
  EXPECT_TRUE(admit->Admit(Workload(), {})->allowed);
}

TEST(LuaPolicyFile, ReasonMustBeAString) {
  auto file = MustLoad("function admit(w) return true, {} end");
  ASSERT_TRUE(file);
  auto verdict = file->Admit(Workload(), {});
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.error().kind, HookErrorKind::kBadReturn);
}

TEST(LuaPolicyFile, LongReasonsAreTruncatedAtACharacterBoundary) {
  LuaLimits limits;
  limits.max_reason_bytes = 16;
  auto file = MustLoad("function admit(w) return false, string.rep('é', 100) end", limits);
  ASSERT_TRUE(file);
  auto verdict = file->Admit(Workload(), {});
  ASSERT_TRUE(verdict.ok());
  EXPECT_LE(verdict->reason.size(), 16u);
  EXPECT_EQ(verdict->reason, "éééééé…");  // 12 bytes + 3 for the ellipsis
}

TEST(LuaPolicyFile, InvalidUtf8InReasonsIsReplaced) {
  auto file = MustLoad(R"(function admit(w) return false, "a\255b" end)");
  ASSERT_TRUE(file);
  auto verdict = file->Admit(Workload(), {});
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict->reason,
            "a\xEF\xBF\xBD"
            "b");
}

TEST(LuaPolicyFile, NonStringErrorObjectsAreContained) {
  auto file = MustLoad(R"(
function admit(w)
  local kind = w.name
  if kind == "table" then error({}) end
  if kind == "nil" then error(nil) end
  if kind == "tostring" then error(setmetatable({}, {__tostring = function() error("x") end})) end
  if kind == "number" then error(42) end
  if kind == "level0" then error("plain", 0) end
  return true
end)");
  ASSERT_TRUE(file);
  const std::pair<std::string, std::string> cases[] = {
      {"table", "error object is a table value"},
      {"nil", "error object is nil"},
      {"tostring", "error object is a table value"},
      {"number", "42"},
      {"level0", "plain"},
  };
  for (const auto& [name, message] : cases) {
    auto w = Workload();
    w["name"] = name;
    auto verdict = file->Admit(w, {});
    ASSERT_FALSE(verdict.ok()) << name;
    EXPECT_EQ(verdict.error().kind, HookErrorKind::kRuntime);
    EXPECT_EQ(verdict.error().message, message) << name;
    EXPECT_GT(verdict.error().line, 0) << name;
  }
  auto w = Workload();
  w["name"] = "fine";
  EXPECT_TRUE(file->Admit(w, {}).ok());
}

TEST(LuaPolicyFile, StateServesCallsAfterErrors) {
  auto file = MustLoad(R"(
function admit(w)
  if w.name == "boom" then error("boom") end
  if w.name == "loop" then while true do end end
  if w.name == "bomb" then local t = {} for i = 1, 1e9 do t[i] = string.rep("x", 1000) .. i end end
  return true, "fine"
end)");
  ASSERT_TRUE(file);
  for (std::string name : {"boom", "loop", "bomb", "boom"}) {
    auto w = Workload();
    w["name"] = name;
    EXPECT_FALSE(file->Admit(w, {}).ok()) << name;
    auto ok = file->Admit(Workload(), {});
    ASSERT_TRUE(ok.ok()) << name << ": " << ok.error().ToString();
    EXPECT_EQ(ok->reason, "fine");
  }
  EXPECT_LT(file->memory_in_use(), 256u << 10);
}

TEST(LuaPolicyFile, NowAndRandomAreDeterministic) {
  auto file = MustLoad(R"(
function score(w, c) return now() * 1000 + math.random(1, 1000) + math.random() end
)");
  ASSERT_TRUE(file);
  HookContext a{1700000000.5, 7};
  HookContext b{1700000000.5, 8};
  auto first = file->Score(Workload(), Cluster(), a);
  auto again = file->Score(Workload(), Cluster(), a);
  auto other = file->Score(Workload(), Cluster(), b);
  ASSERT_TRUE(first.ok() && again.ok() && other.ok());
  EXPECT_EQ(first.value(), again.value());
  EXPECT_NE(first.value(), other.value());
  EXPECT_GE(first.value(), 1700000000500.0);
  // A fresh state gives the same numbers for the same context.
  auto fresh = MustLoad("function score(w, c) return now() * 1000 + math.random(1, 1000) + math.random() end");
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->Score(Workload(), Cluster(), a).value(), first.value());
}

TEST(LuaPolicyFile, NowIsUnavailableAtTopLevel) {
  HookError e = MustFailLoad("local t = now()\n");
  EXPECT_EQ(e.line, 1);
  EXPECT_NE(e.message.find("only available inside"), std::string::npos);
}

TEST(LuaPolicyFile, PrintGoesToABoundedLog) {
  LuaLimits limits;
  limits.max_log_bytes = 32;
  auto file = MustLoad(R"(
function admit(w)
  print("gpus", w.resources.gpus, nil, true)
  for i = 1, 100 do print(string.rep("x", 100)) end
  return true
end)",
                       limits);
  ASSERT_TRUE(file);
  ASSERT_TRUE(file->Admit(Workload(), {}).ok());
  EXPECT_EQ(file->last_log().rfind("gpus\t8\tnil\ttrue\n", 0), 0u) << file->last_log();
  EXPECT_LE(file->last_log().size(), 32u);
}

TEST(LuaPolicyFile, CoverageRecordsExecutedLines) {
  auto file = MustLoad(R"(local limit = 4
local function big(w)
  return w.resources.gpus > limit
end
function admit(w)
  if big(w) then
    return false, "big"
  end
  return true
end
)");
  ASSERT_TRUE(file);
  // Top-level lines are recorded while loading.
  EXPECT_TRUE(file->covered_lines().count(1));
  EXPECT_FALSE(file->covered_lines().count(3));
  file->EnableCoverage(true);
  ASSERT_TRUE(file->Admit(Workload(), {}).ok());
  const std::set<int>& covered = file->covered_lines();
  EXPECT_TRUE(covered.count(3));
  EXPECT_TRUE(covered.count(6));
  EXPECT_TRUE(covered.count(7));
  EXPECT_FALSE(covered.count(9));
  const std::set<int>& executable = file->executable_lines();
  for (int line : {1, 3, 6, 7, 9}) EXPECT_TRUE(executable.count(line)) << line;
  file->EnableCoverage(false);
  auto small = Workload();
  small["resources"]["gpus"] = 1;
  ASSERT_TRUE(file->Admit(small, {}).ok());
  EXPECT_FALSE(file->covered_lines().count(9));
}

}  // namespace
}  // namespace gpufed::policy
