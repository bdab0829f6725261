// The sandbox: what a policy can reach, and the limits it runs under.
#include <gtest/gtest.h>

#include <chrono>

#include "policies/runtime/lua_policy.h"
#include "policies/runtime/test_util.h"

namespace gpufed::policy {
namespace {

using testing::Cluster;
using testing::MustFailLoad;
using testing::MustLoad;
using testing::Workload;

HookResult<Verdict> AdmitWith(const std::string& body, const LuaLimits& limits = {}) {
  auto file = MustLoad("function admit(w)\n" + body + "\nend\n", limits);
  if (!file) return HookError{HookErrorKind::kLoad, "p", "f", 0, "load failed"};
  return file->Admit(Workload(), {});
}

std::string Reason(const std::string& body) {
  auto verdict = AdmitWith(body);
  return verdict.ok() ? verdict->reason : "error: " + verdict.error().message;
}

TEST(LuaSandbox, DangerousGlobalsAreAbsent) {
  for (const char* name :
       {"io", "os", "require", "package", "dofile", "loadfile", "load", "loadstring", "debug",
        "collectgarbage", "warn", "string.dump", "math.randomseed", "newproxy", "module"}) {
    EXPECT_EQ(Reason(std::string("return true, tostring(") + name + ")"), "nil") << name;
  }
}

TEST(LuaSandbox, SafeLibrariesArePresent) {
  EXPECT_EQ(Reason("return true, string.format('%s-%d', string.upper('a'), math.max(1, 2))"), "A-2");
  EXPECT_EQ(Reason("return true, table.concat({utf8.char(72), 'i'})"), "Hi");
  EXPECT_EQ(Reason("return true, ('abc'):rep(2)"), "abcabc");
  EXPECT_EQ(Reason("return true, tostring(select('#', string.find('a=b', '(%w)=(%w)')))"), "4");
  EXPECT_EQ(Reason("local co = coroutine.wrap(function() coroutine.yield(5) end) return true, tostring(co())"), "5");
}

TEST(LuaSandbox, GlobalsAreFrozenAfterLoad) {
  auto file = MustLoad(R"(
limit = 4
local calls = 0
function admit(w)
  if w.name == "write" then counter = 1 end
  if w.name == "overwrite" then limit = 5 end
  if w.name == "rawset" then rawset(_ENV, "x", 1) end
  if w.name == "G" then _G.x = 1 end
  return true, tostring(limit)
end)");
  ASSERT_TRUE(file);
  for (std::string name : {"write", "overwrite", "rawset", "G"}) {
    auto w = Workload();
    w["name"] = name;
    auto verdict = file->Admit(w, {});
    ASSERT_FALSE(verdict.ok()) << name;
    EXPECT_EQ(verdict.error().kind, HookErrorKind::kRuntime) << name;
  }
  auto verdict = file->Admit(Workload(), {});
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict->reason, "4");
  EXPECT_EQ(Reason("return true, tostring(getmetatable(_ENV))"), "false");
}

TEST(LuaSandbox, LibraryTablesAndStringMetatableAreProtected) {
  for (const char* attack :
       {"string.rep = nil", "math.pi = 3", "table.x = 1", "rawset(string, 'rep', print)",
        "setmetatable(string, nil)", "getmetatable('').__index = {}", "('').x = 1",
        "local mt = getmetatable('') mt.__index = {}"}) {
    auto verdict = AdmitWith(std::string(attack) + "\nreturn true");
    EXPECT_FALSE(verdict.ok()) << attack;
  }
  EXPECT_EQ(Reason("return true, tostring(getmetatable(''))"), "false");
  EXPECT_EQ(Reason("return true, ('x'):upper()"), "X");
}

TEST(LuaSandbox, GcMetamethodsAreRefused) {
  auto verdict = AdmitWith("setmetatable({}, {__gc = function() end}) return true");
  ASSERT_FALSE(verdict.ok());
  EXPECT_NE(verdict.error().message.find("__gc"), std::string::npos);
  // Adding __gc after setmetatable does not register a finalizer in Lua 5.4.
  EXPECT_TRUE(AdmitWith("local mt = {} setmetatable({}, mt) mt.__gc = function() while true do end end return true").ok());
}

TEST(LuaSandbox, InfiniteLoopRunsOutOfBudget) {
  auto verdict = AdmitWith("local i = 0\nwhile true do i = i + 1 end");
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.error().kind, HookErrorKind::kBudget);
  EXPECT_EQ(verdict.error().line, 3);
  EXPECT_EQ(verdict.error().ToStatus().code(), StatusCode::kResourceExhausted);
}

TEST(LuaSandbox, PcallCannotSwallowTheBudget) {
  auto verdict = AdmitWith(R"(
  for i = 1, 100 do pcall(function() while true do end end) end
  while true do pcall(error, "x") end
  return true)");
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.error().kind, HookErrorKind::kBudget);
}

TEST(LuaSandbox, CoroutinesRunUnderTheBudget) {
  for (const char* body :
       {"local co = coroutine.create(function() while true do end end) coroutine.resume(co) return true",
        "local f = coroutine.wrap(function() while true do end end) pcall(f) return true",
        "local co = coroutine.wrap(function() while true do coroutine.yield() end end) while true do co() end"}) {
    auto verdict = AdmitWith(body);
    ASSERT_FALSE(verdict.ok()) << body;
    EXPECT_EQ(verdict.error().kind, HookErrorKind::kBudget) << body;
  }
}

TEST(LuaSandbox, TopLevelLoopFailsToLoad) {
  HookError e = MustFailLoad("function admit(w) return true end\nwhile true do end\n");
  EXPECT_EQ(e.kind, HookErrorKind::kBudget);
  EXPECT_EQ(e.line, 2);
}

TEST(LuaSandbox, MemoryCapStopsBombs) {
  LuaLimits limits;
  limits.memory_bytes = 4 << 20;
  for (const char* body : {"local s = string.rep('x', 1 << 30) return true",
                           "local t = {} for i = 1, 1e8 do t[i] = i end return true",
                           "local s = 'x' while true do s = s .. s end"}) {
    auto verdict = AdmitWith(body, limits);
    ASSERT_FALSE(verdict.ok()) << body;
    EXPECT_EQ(verdict.error().kind, HookErrorKind::kMemory) << body << verdict.error().ToString();
  }
}

TEST(LuaSandbox, CaughtMemoryErrorsStillFailTheCall) {
  auto verdict = AdmitWith("pcall(string.rep, 'x', 1 << 30) return true");
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.error().kind, HookErrorKind::kMemory);
}

TEST(LuaSandbox, DeepRecursionHitsTheDepthCap) {
  auto verdict = AdmitWith("local function f(n) return 1 + f(n + 1) end\nreturn f(1) > 0");
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.error().kind, HookErrorKind::kDepth);
  EXPECT_EQ(verdict.error().line, 2);
  EXPECT_TRUE(AdmitWith("local function f(n) if n == 0 then return 0 end return 1 + f(n - 1) end\n"
                        "return f(100) == 100")
                  .ok());
}

TEST(LuaSandbox, AllocationIsChargedToTheBudget) {
  // Few instructions, lots of copying: the allocation charge stops it.
  LuaLimits limits;
  limits.instructions = 100'000;
  auto verdict = AdmitWith("local s = string.rep('x', 1 << 20) while true do local t = s .. 'y' end", limits);
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.error().kind, HookErrorKind::kBudget);
}

TEST(LuaSandbox, WallClockSafetyNet) {
  LuaLimits limits;
  limits.instructions = int64_t{1} << 50;
  limits.wall_time_ms = 50;
  const auto start = std::chrono::steady_clock::now();
  auto verdict = AdmitWith("while true do end", limits);
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.error().kind, HookErrorKind::kDeadline);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(LuaSandbox, CatastrophicPatternsAreRefusedUpFront) {
  const auto start = std::chrono::steady_clock::now();
  auto verdict = AdmitWith(
      "return string.find(string.rep('a', 40), '.-.-.-.-.-.-.-.-.-.-.-.-b') ~= nil");
  ASSERT_FALSE(verdict.ok());
  EXPECT_EQ(verdict.error().kind, HookErrorKind::kBudget);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  EXPECT_EQ(Reason("return true, string.match('key = value', '^(%w+)%s*=%s*(.-)$')"), "key");
}

}  // namespace
}  // namespace gpufed::policy
