#pragma once
// Internal to policies/runtime: the per-lua_State bookkeeping shared by the C++ side
// (LuaPolicyFile) and the C callbacks Lua calls (allocator, hooks, library wrappers).
//
// Every function here that takes a lua_State and may raise a Lua error must only run
// inside a lua_pcall (see LuaPolicyFile::Protected); they keep no C++ objects with
// destructors alive across Lua API calls, because Lua errors longjmp.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "policies/runtime/lua_policy.h"

struct lua_State;

namespace gpufed::policy::internal {

// Instructions between two budget checks. The hook has a cost, so it must not run on
// every instruction; the budget and depth are enforced at this granularity.
inline constexpr int kHookInterval = 1000;
// Allocation is charged to the instruction budget at one unit per this many bytes,
// so a loop of cheap instructions that copy big strings still runs out.
inline constexpr int64_t kBytesPerUnit = 32;

struct SandboxRuntime {
  explicit SandboxRuntime(const LuaLimits& l) : limits(l) {}

  LuaLimits limits;
  size_t used_bytes = 0;  // all memory of the lua_State; capped at limits.memory_bytes
  struct Request {
    void* ptr;
    size_t osize, nsize;
    bool operator==(const Request&) const = default;
  };
  std::optional<Request> refused;  // the last allocation refused for the cap

  // Budget accounting; active only while policy code runs (top level, hook calls).
  bool budget_active = false;
  int64_t remaining = 0;
  int hook_interval = kHookInterval;
  int hook_mask = 0;
  std::chrono::steady_clock::time_point deadline;

  // Sticky for the rest of a call: once set, the call fails even if the policy caught
  // the Lua error. Reset by BeginCall.
  bool budget_exhausted = false;
  bool deadline_exceeded = false;
  bool memory_exceeded = false;  // an allocation failed even after an emergency GC
  bool depth_exceeded = false;
  int error_line = 0;  // innermost Lua line when the error was raised; 0 if unknown

  // Views carry the generation of the call that created them; EndCall bumps it, which
  // makes every view handed out so far dead. `views` holds the JSON nodes of this
  // call's views (a view is an index into it); `view_index` finds a node's slot once
  // there are too many for a linear search. Both are emptied by EndCall.
  uint64_t generation = 1;
  std::vector<const nlohmann::json*> views;
  std::unordered_map<const nlohmann::json*, uint32_t> view_index;
  // Read recording (LuaPolicyFile::RecordReads): the JSON pointer of each container of
  // the workload argument handed to Lua in this call (emptied by EndCall), and every
  // read so far (kept until taken).
  bool recording = false;
  std::unordered_map<const nlohmann::json*, std::string> tracked_paths;
  std::vector<ViewRead> reads;
  const HookContext* context = nullptr;  // null outside hook calls
  bool random_seeded = false;            // math.random seeded in this call yet?

  bool loading = false;
  bool coverage_enabled = false;
  std::set<int> covered_lines;
  std::string log;  // `print` output of the current call, bounded

  bool AnyLimitHit() const {
    return budget_exhausted || deadline_exceeded || memory_exceeded || depth_exceeded;
  }
};

SandboxRuntime* RuntimeOf(lua_State* L);

// A new state whose allocator enforces rt->limits.memory_bytes, or nullptr when even
// the bare state does not fit. `rt` must outlive the state.
lua_State* NewSandboxState(SandboxRuntime* rt);

// lua_CFunction, run once under lua_pcall: opens the allowed libraries, installs the
// wrappers, freezes the library tables and builds the _ENV proxy for the file.
int OpenSandbox(lua_State* L);
// Pushes the file's _ENV proxy (registry lookup; cannot raise).
void PushEnvProxy(lua_State* L);
// Pushes the table that holds the file's own globals (registry lookup; cannot raise).
void PushEnvLayer(lua_State* L);
// Makes the _ENV proxy reject writes from now on. May raise.
void FreezeEnv(lua_State* L);

// Arms and disarms the limits around one protected call; neither raises.
void BeginCall(lua_State* L, SandboxRuntime* rt, const HookContext* ctx, bool budgeted);
void EndCall(lua_State* L, SandboxRuntime* rt);

// Arms the budget hook on a new coroutine thread, as on the running thread.
void ArmThread(lua_State* co, SandboxRuntime* rt);

// Charges `units` of work done in C to the budget; raises when it is exhausted.
void Charge(lua_State* L, int64_t units);

// Error handler for lua_pcall: records the innermost Lua line, returns the error as is.
int MessageHandler(lua_State* L);

}  // namespace gpufed::policy::internal
