// Runs every hostile Lua policy in this folder and checks the outcome its header
// declares. Header lines (before the first non-comment line):
//   -- expect: load-error | hook-error | ok
//   -- expect-kind: budget | memory | depth | runtime | load | bad-return | deadline
//   -- expect-message: <substring of HookError::message>
//   -- expect-line: <line> | 0 (unknown, e.g. memory errors) | any
//   -- hook: admit | filter | score     (default: every hook the file defines)
//   -- calls: <n>                        (the last of n calls must show the outcome)
//   -- limits: memory=<bytes> instructions=<n> wall_time_ms=<ms>
//   -- normal: yes | no                  (hooks answer normally when w.mode == "normal")
// After the hostile call, the same state must serve a normal call quickly (when the
// file supports one), hold little memory, and a fresh state must run a normal policy.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "policies/runtime/lua_policy.h"

namespace gpufed::policy {
namespace {

namespace fs = std::filesystem;


struct Expectation {
  std::string outcome;
  std::string kind;
  std::string message;
  std::string line = "any";
  std::string hook;
  int calls = 1;
  bool normal = false;
  LuaLimits limits;
};

Expectation ParseHeader(const std::string& source) {
  Expectation e;
  // Outcomes must not depend on how busy the machine is: the deterministic limits
  // (instructions, memory, depth) decide, unless a file tests the wall-clock net itself.
  e.limits.wall_time_ms = 0;
  std::istringstream in(source);
  std::string text;
  while (std::getline(in, text) && text.rfind("--", 0) == 0) {
    const size_t colon = text.find(':');
    if (colon == std::string::npos) continue;
    std::string key = text.substr(2, colon - 2);
    key.erase(0, key.find_first_not_of(' '));
    std::string value = text.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    if (key == "expect") e.outcome = value;
    if (key == "expect-kind") e.kind = value;
    if (key == "expect-message") e.message = value;
    if (key == "expect-line") e.line = value;
    if (key == "hook") e.hook = value;
    if (key == "calls") e.calls = std::stoi(value);
    if (key == "normal") e.normal = value == "yes";
    if (key == "limits") {
      std::istringstream limits(value);
      std::string item;
      while (limits >> item) {
        const size_t eq = item.find('=');
        const std::string name = item.substr(0, eq);
        const int64_t number = std::stoll(item.substr(eq + 1));
        if (name == "memory") e.limits.memory_bytes = static_cast<size_t>(number);
        if (name == "instructions") e.limits.instructions = number;
        if (name == "wall_time_ms") e.limits.wall_time_ms = number;
      }
    }
  }
  return e;
}

nlohmann::json Workload(const char* mode) {
  return {{"name", "w1"}, {"mode", mode}, {"resources", {{"gpus", 4}, {"models", {"H100"}}}}};
}

nlohmann::json Cluster() { return {{"name", "c1"}, {"zone", "eu"}, {"free_gpus", 8}}; }

// Calls one hook; returns the error, or nothing on success (checking the reason bound).
std::optional<HookError> Call(LuaPolicyFile& file, const std::string& hook, const char* mode,
                              const LuaLimits& limits) {
  const HookContext ctx{1700000000, 42};
  if (hook == "score") {
    auto r = file.Score(Workload(mode), Cluster(), ctx);
    if (!r.ok()) return r.error();
    return std::nullopt;
  }
  auto r = hook == "admit" ? file.Admit(Workload(mode), ctx) : file.Filter(Workload(mode), Cluster(), ctx);
  if (!r.ok()) return r.error();
  EXPECT_LE(r->reason.size(), limits.max_reason_bytes);
  return std::nullopt;
}

void CheckError(const HookError& error, const Expectation& e, const std::string& path) {
  SCOPED_TRACE(error.ToString());
  EXPECT_EQ(error.file, path);
  EXPECT_EQ(error.policy, "hostile");
  if (!e.kind.empty()) {
    EXPECT_EQ(HookErrorKindName(error.kind), e.kind);
  }
  if (!e.message.empty()) {
    EXPECT_NE(error.message.find(e.message), std::string::npos);
  }
  if (e.line != "any") {
    EXPECT_EQ(error.line, std::stoi(e.line));
  }
  EXPECT_LE(error.message.size(), 1024u);
}

std::vector<std::string> HostileFiles() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(fs::path(GPUFED_SOURCE_DIR) / "tests/hostile-policies")) {
    if (entry.path().extension() == ".lua") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

constexpr const char* kNormalPolicy = R"(
local max_gpus = 16
function admit(w)
  if w.resources.gpus > max_gpus then return false, "too many gpus" end
  return true
end
function filter(w, c) return c.free_gpus >= w.resources.gpus, "capacity" end
function score(w, c) return c.free_gpus - w.resources.gpus end
)";

class HostilePolicy : public ::testing::TestWithParam<std::string> {};

TEST(HostilePolicySuite, HasEnoughCases) { EXPECT_GE(HostileFiles().size(), 35u); }

TEST_P(HostilePolicy, BehavesAsDeclaredAndLeavesTheRuntimeHealthy) {
  const std::string path = "tests/hostile-policies/" + GetParam() + ".lua";
  std::ifstream in(fs::path(GPUFED_SOURCE_DIR) / path, std::ios::binary);
  ASSERT_TRUE(in) << path;
  const std::string source((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Expectation e = ParseHeader(source);
  ASSERT_TRUE(e.outcome == "load-error" || e.outcome == "hook-error" || e.outcome == "ok")
      << "missing or bad '-- expect:' header in " << path;

  auto loaded = LuaPolicyFile::Load("hostile", path, source, e.limits);
  if (e.outcome == "load-error") {
    ASSERT_FALSE(loaded.ok()) << path << " loaded but should not";
    CheckError(loaded.error(), e, path);
  } else {
    ASSERT_TRUE(loaded.ok()) << loaded.error().ToString();
    LuaPolicyFile& file = *loaded.value();
    std::vector<std::string> hooks;
    if (!e.hook.empty()) {
      hooks.push_back(e.hook);
    } else {
      for (const auto& h : file.defined_hooks()) hooks.push_back(h);
    }
    ASSERT_FALSE(hooks.empty());
    for (const std::string& hook : hooks) {
      SCOPED_TRACE(hook);
      for (int i = 1; i < e.calls; ++i) {
        auto early = Call(file, hook, "attack", e.limits);
        ASSERT_FALSE(early.has_value()) << "call " << i << ": " << early->ToString();
      }
      auto result = Call(file, hook, "attack", e.limits);
      if (e.outcome == "ok") {
        EXPECT_FALSE(result.has_value()) << result->ToString();
      } else {
        ASSERT_TRUE(result.has_value()) << "hook succeeded but should fail";
        CheckError(*result, e, path);
      }
      // The same state still answers: the hostile hook again (same outcome, no crash,
      // no hang), then a normal call within the same instruction budget.
      auto again = Call(file, hook, "attack", e.limits);
      if (e.outcome == "hook-error") {
        EXPECT_TRUE(again.has_value());
      }
      if (e.normal) {
        auto normal = Call(file, hook, "normal", e.limits);
        EXPECT_FALSE(normal.has_value()) << normal->ToString();
      }
    }
    EXPECT_LE(file.memory_in_use(), e.limits.memory_bytes);
  }

  // A fresh state next to the wreckage runs a normal policy normally.
  auto fresh = LuaPolicyFile::Load("normal", "normal.lua", kNormalPolicy);
  ASSERT_TRUE(fresh.ok()) << fresh.error().ToString();
  auto admit = fresh.value()->Admit(Workload("normal"), {});
  ASSERT_TRUE(admit.ok());
  EXPECT_TRUE(admit->allowed);
  auto score = fresh.value()->Score(Workload("normal"), Cluster(), {});
  ASSERT_TRUE(score.ok());
  EXPECT_EQ(score.value(), 4.0);
}

INSTANTIATE_TEST_SUITE_P(Files, HostilePolicy, ::testing::ValuesIn(HostileFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace gpufed::policy
