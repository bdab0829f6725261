#pragma once
// LuaPolicyFile: one compiled Lua policy file in its own sandboxed lua_State.
//
// A Policy resource may reference Lua files that define any of these globals:
//   admit(w)      -> boolean, reason string (or nil)
//   filter(w, c)  -> boolean, reason string (or nil)
//   score(w, c)   -> finite number
// `w` and `c` are read-only views of the JSON the caller passes (workload, cluster).
// Nested objects and arrays are views too; `#`, `ipairs` and `pairs` work on them
// (`pairs` visits object keys in sorted order, so iteration is deterministic).
// A view is dead once the call that received it returns: using a stashed view later
// raises an error instead of reading freed memory.
//
// Sandbox (see README.md for the full list and the reasons):
//   - only base (minus dofile, loadfile, load, collectgarbage, warn), string (minus dump),
//     table, math (random is seeded per call from HookContext::seed; no randomseed),
//     utf8 and coroutine; no io, os, package/require, debug;
//   - `now()` returns HookContext::now_seconds; `print` appends to a bounded per-call log;
//   - globals are frozen once the file has loaded: a hook cannot write a global, so it
//     cannot keep state in globals between decisions; library tables and the string
//     metatable are read-only; `__gc` metamethods are refused (finalizers would run
//     outside any budget);
//   - text chunks only; bytecode is never loaded.
//
// Limits, per call (and for the file's top level while it loads): an instruction budget
// (C library work such as pattern matching, table moves and allocation is charged to it
// too), a memory cap for the whole state, a call depth cap, a bounded reason length and
// a wall-clock safety net. Whatever a policy does, a call returns a HookResult; the
// controller never crashes or hangs, and the same LuaPolicyFile serves the next call
// normally after any error.
//
// Failing closed is the caller's decision: the placer treats a HookError from admit or
// filter as a denial when the Policy's enforcement is `deny`, and as a warning for
// `warn`/`dryrun`; a score error drops the policy's score term and is reported.
//
// Thread safety: a LuaPolicyFile is NOT thread-safe (a lua_State is single-threaded).
// Give each worker its own instance; Load the same source once per worker.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "controller/common/view_read.h"
#include "policies/runtime/hook_result.h"

struct lua_State;

namespace gpufed::policy {

namespace internal {
struct SandboxRuntime;
}  // namespace internal

struct LuaLimits {
  // Budget per call, in Lua VM instructions. Library work is charged in the same unit:
  // 1 per 32 bytes allocated, and a worst-case step bound for string patterns.
  int64_t instructions = 1'000'000;
  // Cap on all memory of the lua_State (code, constants, data, stacks).
  size_t memory_bytes = 16u << 20;
  // Cap on nested Lua calls. Checked every 1000 instructions, so deep recursion may
  // overshoot by a few hundred frames before it is stopped (both deterministic).
  int max_depth = 200;
  // Reasons longer than this are cut at a UTF-8 boundary and end in "…".
  size_t max_reason_bytes = 256;
  // Wall-clock safety net per call, in milliseconds; 0 disables it. The instruction
  // budget is the deterministic limit; this only catches pathological single operations
  // (e.g. comparing multi-megabyte strings in a loop) that are cheap in instructions but
  // slow in time. A deadline error is not deterministic, so keep it well above any
  // legitimate call.
  int64_t wall_time_ms = 1000;
  // Bytes kept from `print` per call (see last_log()).
  size_t max_log_bytes = 4096;
};

// Per-call inputs that make a hook deterministic.
struct HookContext {
  double now_seconds = 0;  // what `now()` returns: the snapshot time, never a clock
  uint64_t seed = 0;       // math.random is seeded with this at the first use in a call
  // The Policy's `params`, passed as the hooks' last argument (admit(w, p),
  // filter(w, c, p), score(w, c, p)) as a read-only view; null passes nothing.
  const nlohmann::json* params = nullptr;
};

// How a hook function is declared: where, and the parameters it names.
struct HookSignature {
  int line = 0;         // where `function admit(...)` starts
  int params = 0;       // named parameters
  bool vararg = false;  // ends in `...`
};

struct Verdict {
  bool allowed = false;
  std::string reason;  // "" when the hook returned no reason
  // filter's optional third value, when it allows the cluster: pools of it the workload
  // may not use, each with its reason (`{["h100"] = "over the price cap"}`), in name order.
  std::vector<std::pair<std::string, std::string>> denied_pools;
};

// At most this many pools in a filter's third value (a cluster declares far fewer).
inline constexpr size_t kMaxDeniedPools = 256;

class LuaPolicyFile {
 public:
  // Compiles `source` (text only; bytecode is refused) and runs its top level under
  // `limits`. `policy_name` and `file_path` label errors; `file_path` is also the chunk
  // name, so Lua messages carry it. Returns a kLoad error with the line for syntax
  // errors, a top level that raises, or an admit/filter/score global that is not a
  // function; kBudget/kMemory/kDepth/kDeadline when the top level exceeds a limit.
  static HookResult<std::unique_ptr<LuaPolicyFile>> Load(std::string policy_name, std::string file_path,
                                                         std::string_view source, const LuaLimits& limits = {});
  ~LuaPolicyFile();
  LuaPolicyFile(const LuaPolicyFile&) = delete;
  LuaPolicyFile& operator=(const LuaPolicyFile&) = delete;

  const std::string& policy_name() const { return policy_name_; }
  const std::string& file_path() const { return file_path_; }
  bool has_admit() const;
  bool has_filter() const;
  bool has_score() const;

  // Calls the hook. `w` and `c` must stay alive and unmodified for the duration of the
  // call only. Errors: kNotDefined if the file has no such hook; kRuntime, kBudget,
  // kMemory, kDepth, kDeadline as described above; kBadReturn if admit/filter do not
  // return a boolean (plus an optional string), filter's optional third value is not a
  // table of pool name = reason strings, or score does not return a finite number.
  // A call that hit the memory cap or the budget fails even if the policy caught the
  // error with pcall.
  HookResult<Verdict> Admit(const nlohmann::json& w, const HookContext& ctx);
  HookResult<Verdict> Filter(const nlohmann::json& w, const nlohmann::json& c, const HookContext& ctx);
  HookResult<double> Score(const nlohmann::json& w, const nlohmann::json& c, const HookContext& ctx);

  // Line coverage. Lines run by the top level while loading are always recorded;
  // calls record lines only while coverage is enabled (it slows calls down).
  void EnableCoverage(bool enabled);
  const std::set<int>& covered_lines() const;
  // Lines holding code, from the top-level chunk and every function reachable from the
  // globals and upvalues after loading (functions created later are not seen).
  const std::set<int>& executable_lines() const { return executable_lines_; }
  // Names of the hooks the file defines, e.g. {"admit", "score"}.
  std::set<std::string> defined_hooks() const;
  // The declaration of hook `hook` ("admit", "filter", "score"); nothing when undefined.
  std::optional<HookSignature> signature(std::string_view hook) const;

  // While on, calls record every read of their workload argument; TakeReads returns
  // (and forgets) what was recorded, sorted, without duplicates. A hook is a pure
  // function of its arguments, `now` and the seed (math.random, seeded from the
  // workload's name, records a read of /name), so equal reads mean an equal result.
  void RecordReads(bool on);
  std::vector<ViewRead> TakeReads();

  // What `print` wrote during the last call (or the load), at most max_log_bytes.
  const std::string& last_log() const;
  // Bytes currently held by the lua_State.
  size_t memory_in_use() const;

 private:
  struct Refs {
    int admit = -2, filter = -2, score = -2;  // LUA_NOREF when undefined
    int admit_line = 0, filter_line = 0, score_line = 0;
  };

  LuaPolicyFile(std::string policy_name, std::string file_path, const LuaLimits& limits);
  HookError MakeError(HookErrorKind kind, int line, const std::string& message) const;
  // Runs `fn` (a lua_CFunction taking a light userdata frame) under the limits.
  // On success leaves `nresults` values on the stack; on failure returns the error.
  bool Protected(int (*fn)(lua_State*), void* frame, int nresults, bool budgeted, const HookContext* ctx,
                 HookError* error);
  HookResult<Verdict> CallVerdict(const char* hook, int ref, int line, const nlohmann::json& w, const nlohmann::json* c,
                                  const HookContext& ctx);
  // filter's third value (on the top of the stack): nil, or pool name = reason strings.
  std::optional<HookError> ReadDeniedPools(lua_State* L, int line,
                                           std::vector<std::pair<std::string, std::string>>& out) const;

  std::string policy_name_;
  std::string file_path_;
  std::string short_source_;  // how Lua abbreviates file_path_ in messages
  std::string source_;        // the file's text: a runtime error quotes its line (Located)
  std::unique_ptr<internal::SandboxRuntime> runtime_;
  lua_State* state_ = nullptr;
  Refs refs_;
  std::optional<HookSignature> signatures_[3];  // admit, filter, score
  std::set<int> executable_lines_;
};

}  // namespace gpufed::policy
