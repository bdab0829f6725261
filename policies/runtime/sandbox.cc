#include "policies/runtime/sandbox.h"

#include <lua.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "policies/runtime/lua_guards.h"
#include "policies/runtime/lua_view.h"

namespace gpufed::policy::internal {
namespace {

// Registry keys: the addresses are unique, the contents unused.
constexpr char kEnvProxyKey = 0;
constexpr char kEnvLayerKey = 0;
constexpr char kEnvMetaKey = 0;
constexpr char kFrozenSetKey = 0;

void Hook(lua_State* L, lua_Debug* ar);

// Never reached: every call into Lua is protected. If it happens anyway the process
// state is unknown, so stop loudly instead of limping on.
int Panic(lua_State* L) {
  const char* msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "?";
  std::fprintf(stderr, "gpufed: unprotected Lua error in the policy runtime: %s\n", msg);
  std::abort();
}

void* Allocate(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* rt = static_cast<SandboxRuntime*>(ud);
  const size_t old_size = ptr != nullptr ? osize : 0;  // osize is a type tag when ptr==NULL
  if (nsize == 0) {
    std::free(ptr);
    rt->used_bytes -= old_size;
    return nullptr;
  }
  if (nsize > old_size) {
    const size_t growth = nsize - old_size;
    if (growth > rt->limits.memory_bytes - std::min(rt->used_bytes, rt->limits.memory_bytes)) {
      // Lua answers a refusal with an emergency full GC and the same request again.
      // Only a refused retry (or a request beyond the whole cap) is a real memory
      // error: garbage alone must not fail a call.
      const SandboxRuntime::Request request{ptr, osize, nsize};
      if ((rt->refused.has_value() && *rt->refused == request) || nsize > rt->limits.memory_bytes) {
        rt->memory_exceeded = true;
      }
      rt->refused = request;
      return nullptr;
    }
    rt->refused.reset();
    if (rt->budget_active) {
      // Refusing growth once the budget is gone makes allocation-heavy code stop at
      // once instead of at the next hook.
      if (rt->budget_exhausted || rt->deadline_exceeded) return nullptr;
      rt->remaining -= static_cast<int64_t>(nsize) / kBytesPerUnit;
    }
  }
  void* block = std::realloc(ptr, nsize);
  if (block == nullptr) {
    if (nsize <= old_size) return ptr;  // Lua requires shrinking to succeed
    return nullptr;
  }
  rt->used_bytes = rt->used_bytes - old_size + nsize;
  return block;
}

// Remembers the innermost Lua line on L's stack as the error's line, unless one is
// already known. Reads the stack only; allocates nothing.
void RecordErrorLine(lua_State* L, SandboxRuntime* rt) {
  lua_Debug ar;
  for (int level = 0; rt->error_line == 0 && lua_getstack(L, level, &ar) != 0; ++level) {
    if (lua_getinfo(L, "l", &ar) != 0 && ar.currentline > 0) rt->error_line = ar.currentline;
  }
}

[[noreturn]] void RaiseLimit(lua_State* L, SandboxRuntime* rt) {
  // Where the budget first ran out. The message below may not even be allocated (the
  // allocator refuses growth now), so the error handler might never run.
  RecordErrorLine(L, rt);
  // Re-arm for every instruction so a pcall inside the policy cannot swallow the
  // error: the next instruction after the pcall raises again.
  lua_sethook(L, Hook, rt->hook_mask | LUA_MASKCOUNT, 1);
  lua_pushstring(L, rt->deadline_exceeded ? "wall-clock limit exceeded"
                                          : "instruction budget exhausted");
  lua_error(L);
  std::abort();  // lua_error does not return
}

void CheckLimits(lua_State* L, SandboxRuntime* rt) {
  const bool was_exhausted = rt->budget_exhausted || rt->deadline_exceeded;
  if (rt->remaining < 0) rt->budget_exhausted = true;
  if (!rt->budget_exhausted && !rt->deadline_exceeded && rt->limits.wall_time_ms > 0 &&
      std::chrono::steady_clock::now() > rt->deadline) {
    rt->deadline_exceeded = true;
  }
  if (!rt->budget_exhausted && !rt->deadline_exceeded) return;
  // The error's line is where the limit was first hit, not where an earlier error
  // (one being unwound when a __close handler ran out, say) was raised.
  if (!was_exhausted) rt->error_line = 0;
  RaiseLimit(L, rt);
}

void Hook(lua_State* L, lua_Debug* ar) {
  SandboxRuntime* rt = RuntimeOf(L);
  if (ar->event == LUA_HOOKLINE) {
    if (rt->loading || rt->coverage_enabled) rt->covered_lines.insert(ar->currentline);
    return;
  }
  if (ar->event != LUA_HOOKCOUNT || !rt->budget_active) return;
  rt->remaining -= lua_gethookcount(L);
  CheckLimits(L, rt);
  // A coroutine may carry settings from an earlier call; bring it in line.
  if (lua_gethookcount(L) != rt->hook_interval || lua_gethookmask(L) != rt->hook_mask) {
    lua_sethook(L, Hook, rt->hook_mask, rt->hook_interval);
  }
  lua_Debug probe;
  if (lua_getstack(L, rt->limits.max_depth, &probe) != 0) {
    rt->depth_exceeded = true;
    RecordErrorLine(L, rt);
    luaL_error(L, "call depth limit of %d exceeded", rt->limits.max_depth);
  }
}

// --- replacements for base functions -------------------------------------------------

int Now(lua_State* L) {
  SandboxRuntime* rt = RuntimeOf(L);
  if (rt->context == nullptr) {
    return luaL_error(L, "now() is only available inside admit, filter and score");
  }
  // A verdict that read the time holds for this plan's time only (a memo kept across
  // plans must not reuse it at another time).
  if (rt->recording) rt->reads.push_back({"", ViewRead::Kind::kNow});
  lua_pushnumber(L, rt->context->now_seconds);
  return 1;
}

// print: appends to a bounded per-call log instead of stdout.
int Print(lua_State* L) {
  SandboxRuntime* rt = RuntimeOf(L);
  const int n = lua_gettop(L);
  for (int i = 1; i <= n; ++i) {
    size_t len = 0;
    const char* s = luaL_tolstring(L, i, &len);
    const size_t room = rt->limits.max_log_bytes - std::min(rt->log.size(), rt->limits.max_log_bytes);
    Charge(L, static_cast<int64_t>(len) / kBytesPerUnit);
    rt->log.append(s, std::min(len, room));
    if (i < n && rt->log.size() < rt->limits.max_log_bytes) rt->log.push_back('\t');
    lua_pop(L, 1);
  }
  if (rt->log.size() < rt->limits.max_log_bytes) rt->log.push_back('\n');
  return 0;
}

bool IsFrozen(lua_State* L, int idx) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kFrozenSetKey);
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  const bool frozen = lua_toboolean(L, -1);
  lua_pop(L, 2);
  return frozen;
}

// rawset, refusing the sandbox's read-only tables (the _ENV proxy, library tables).
int SafeRawset(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  if (IsFrozen(L, 1)) return luaL_error(L, "rawset on a read-only table");
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

// setmetatable, refusing __gc: a finalizer would run during some later GC step, outside
// the call that created it and outside any budget. Lua only registers an object for
// finalization if __gc is present when setmetatable runs, so this check is enough.
int SafeSetmetatable(lua_State* L) {
  if (lua_type(L, 2) == LUA_TTABLE) {
    lua_pushliteral(L, "__gc");
    const bool has_gc = lua_rawget(L, 2) != LUA_TNIL;
    lua_pop(L, 1);
    if (has_gc) return luaL_error(L, "__gc metamethods are not allowed in policies");
  }
  lua_settop(L, 2);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 2, 1);
  return 1;
}

int ReadOnlyTable(lua_State* L) {
  return luaL_error(L, "attempt to modify a read-only library table");
}

int ReadOnlyGlobals(lua_State* L) {
  const char* key = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "?";
  return luaL_error(L, "attempt to write global '%s': globals are read-only once the file has loaded",
                    key);
}

// Replaces the table at the top of the stack with an empty proxy that reads through to
// it and rejects writes; the proxy is registered as frozen.
void ReplaceWithReadOnlyProxy(lua_State* L) {
  lua_newtable(L);                  // real proxy
  lua_createtable(L, 0, 3);         // real proxy mt
  lua_pushvalue(L, -3);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadOnlyTable);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);          // real proxy
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kFrozenSetKey);
  lua_pushvalue(L, -2);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);                    // real proxy
  lua_remove(L, -2);                // proxy
}

void RemoveField(lua_State* L, int table, const char* name) {
  lua_pushnil(L);
  lua_setfield(L, table, name);
}

}  // namespace

SandboxRuntime* RuntimeOf(lua_State* L) {
  return *static_cast<SandboxRuntime**>(lua_getextraspace(L));
}

lua_State* NewSandboxState(SandboxRuntime* rt) {
  lua_State* L = lua_newstate(Allocate, rt);
  if (L == nullptr) return nullptr;
  // Threads copy the main thread's extra space, so coroutines find the runtime too.
  *static_cast<SandboxRuntime**>(lua_getextraspace(L)) = rt;
  lua_atpanic(L, Panic);
  return L;
}

int OpenSandbox(lua_State* L) {
  const struct {
    const char* name;
    lua_CFunction open;
  } kLibs[] = {{LUA_GNAME, luaopen_base},     {LUA_STRLIBNAME, luaopen_string},
               {LUA_TABLIBNAME, luaopen_table}, {LUA_MATHLIBNAME, luaopen_math},
               {LUA_UTF8LIBNAME, luaopen_utf8}, {LUA_COLIBNAME, luaopen_coroutine}};
  for (const auto& lib : kLibs) {
    luaL_requiref(L, lib.name, lib.open, 1);
    lua_pop(L, 1);
  }
  lua_newtable(L);  // weak set of read-only tables, consulted by rawset
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kFrozenSetKey);

  lua_pushglobaltable(L);
  const int g = lua_gettop(L);
  // Code loading, GC control and output are the host's business.
  for (const char* name : {"dofile", "loadfile", "load", "collectgarbage", "warn", "_G"}) {
    RemoveField(L, g, name);
  }
  lua_getfield(L, g, "setmetatable");
  lua_pushcclosure(L, SafeSetmetatable, 1);
  lua_setfield(L, g, "setmetatable");
  lua_pushcfunction(L, SafeRawset);
  lua_setfield(L, g, "rawset");
  lua_pushcfunction(L, Print);
  lua_setfield(L, g, "print");
  lua_pushcfunction(L, Now);
  lua_setfield(L, g, "now");
  InstallGuards(L, g);

  // Library tables become read-only proxies, and strings index the string proxy, so
  // `string.rep = f` and `("").rep = f` cannot leave state behind for the next call.
  for (const char* lib : {LUA_STRLIBNAME, LUA_TABLIBNAME, LUA_MATHLIBNAME, LUA_UTF8LIBNAME,
                          LUA_COLIBNAME}) {
    lua_getfield(L, g, lib);
    ReplaceWithReadOnlyProxy(L);
    lua_setfield(L, g, lib);
  }
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_getfield(L, g, LUA_STRLIBNAME);
  lua_setfield(L, -2, "__index");
  lua_pushboolean(L, 0);  // getmetatable("") returns false, never the real table
  lua_setfield(L, -2, "__metatable");
  lua_pop(L, 2);

  RegisterViewMetatable(L);

  // _ENV for the file: an empty proxy -> the file's own globals (layer) -> the sandbox
  // globals. While the file loads, writes go to the layer; FreezeEnv then rejects them.
  lua_createtable(L, 0, 3);  // layer
  lua_createtable(L, 0, 2);
  lua_pushvalue(L, g);
  lua_setfield(L, -2, "__index");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kEnvLayerKey);
  const int layer = lua_gettop(L);
  lua_newtable(L);  // proxy
  lua_createtable(L, 0, 3);
  lua_pushvalue(L, layer);
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, layer);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kEnvMetaKey);
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kEnvProxyKey);
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kFrozenSetKey);
  lua_pushvalue(L, -2);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  lua_setfield(L, g, "_G");  // _G is the proxy, never the real global table
  lua_settop(L, 0);
  return 0;
}

void PushEnvProxy(lua_State* L) { lua_rawgetp(L, LUA_REGISTRYINDEX, &kEnvProxyKey); }
void PushEnvLayer(lua_State* L) { lua_rawgetp(L, LUA_REGISTRYINDEX, &kEnvLayerKey); }

void FreezeEnv(lua_State* L) {
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kEnvMetaKey);
  lua_pushcfunction(L, ReadOnlyGlobals);
  lua_setfield(L, -2, "__newindex");
  lua_pop(L, 1);
}

void BeginCall(lua_State* L, SandboxRuntime* rt, const HookContext* ctx, bool budgeted) {
  rt->context = ctx;
  rt->random_seeded = false;
  rt->log.clear();
  rt->budget_exhausted = rt->deadline_exceeded = false;
  rt->memory_exceeded = rt->depth_exceeded = false;
  rt->error_line = 0;
  if (!budgeted) return;
  rt->budget_active = true;
  rt->remaining = rt->limits.instructions;
  rt->hook_interval = static_cast<int>(
      std::clamp<int64_t>(rt->limits.instructions, 1, kHookInterval));
  rt->hook_mask = LUA_MASKCOUNT | ((rt->loading || rt->coverage_enabled) ? LUA_MASKLINE : 0);
  if (rt->limits.wall_time_ms > 0) {
    rt->deadline = std::chrono::steady_clock::now() +
                   std::chrono::milliseconds(rt->limits.wall_time_ms);
  }
  lua_sethook(L, Hook, rt->hook_mask, rt->hook_interval);
}

void EndCall(lua_State* L, SandboxRuntime* rt) {
  lua_sethook(L, nullptr, 0, 0);
  rt->budget_active = false;
  rt->context = nullptr;
  ++rt->generation;
  rt->views.clear();
  if (!rt->view_index.empty()) rt->view_index.clear();
  if (!rt->tracked_paths.empty()) rt->tracked_paths.clear();
}

void ArmThread(lua_State* co, SandboxRuntime* rt) {
  if (!rt->budget_active) return;
  const bool exhausted = rt->budget_exhausted || rt->deadline_exceeded;
  lua_sethook(co, Hook, rt->hook_mask, exhausted ? 1 : rt->hook_interval);
}

void Charge(lua_State* L, int64_t units) {
  SandboxRuntime* rt = RuntimeOf(L);
  if (!rt->budget_active) return;
  rt->remaining -= units;
  CheckLimits(L, rt);
}

int MessageHandler(lua_State* L) {
  RecordErrorLine(L, RuntimeOf(L));  // level 0 is this handler, a C function: skipped
  return 1;  // the error object, unchanged: converting it could run policy code
}

}  // namespace gpufed::policy::internal
