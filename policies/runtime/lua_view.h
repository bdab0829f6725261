#pragma once
// Internal to policies/runtime: read-only Lua views of nlohmann::json values.
//
// A view is a light userdata encoding (call generation, slot of the node in this call's
// view table), so creating one allocates nothing in Lua. Indexing an object view with a
// string returns the member (JSON null and missing keys are nil), indexing an array
// view with 1..#v returns the element; nested objects and arrays come back as views of
// the same generation. `#` is the array length (0 for objects, like a Lua table with
// only string keys), `pairs` iterates in key order, `ipairs` works through __index.
// The same node gives the same view within a call, so `==` compares identity.
// Writes raise; the metatable is locked. When the runtime's generation moves on (at the
// end of every call) all earlier views are dead and any use of them raises, so a
// stashed view never reads JSON that the caller has freed.
#include <cstdint>

#include <nlohmann/json_fwd.hpp>

struct lua_State;

namespace gpufed::policy::internal {

// Installs the view metatable as the state's light userdata metatable (the sandbox
// exposes no other light userdata to Lua code). May raise; run it protected.
void RegisterViewMetatable(lua_State* L);

// Pushes a view of `node` (an object or array that must outlive the call);
// `generation` must be the runtime's current one. Raises when the call already looks at
// 65536 distinct nodes; call only from protected code.
void PushView(lua_State* L, const nlohmann::json* node, uint64_t generation);

// Pushes `value` as Lua sees it: a view for objects and arrays, nil for null, else the
// scalar. May raise (memory); call only from protected code.
void PushValue(lua_State* L, const nlohmann::json* value, uint64_t generation);
// PushValue for a hook's workload argument: while the runtime records reads, reads of
// it and of everything reached through it are recorded (SandboxRuntime::reads).
void PushWorkloadValue(lua_State* L, const nlohmann::json* value, uint64_t generation);

}  // namespace gpufed::policy::internal
