#include "policies/runtime/lua_view.h"

#include <lua.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <nlohmann/json.hpp>
#include <string_view>

#include "policies/runtime/sandbox.h"

namespace gpufed::policy::internal {
namespace {

using nlohmann::json;

// A view is a light userdata whose value encodes (generation, slot): the slot indexes
// SandboxRuntime::views, the JSON nodes of the current call. Light userdata cost no
// allocation, which keeps nested access cheap, and Lua code cannot forge one (only C
// code creates them, and the sandbox hands out no others). All light userdata share
// one metatable per state: the view metatable.
constexpr int kSlotBits = 24;
constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;
constexpr uint64_t kGenerationMask = (uint64_t{1} << (64 - kSlotBits)) - 1;
// Distinct objects/arrays one call may look at; bounds the C++ memory behind views.
constexpr size_t kMaxViewsPerCall = 1 << 16;
// Up to this many slots a linear scan beats hashing.
constexpr size_t kLinearScanSlots = 32;

void* Encode(uint64_t generation, uint32_t slot) {
  return reinterpret_cast<void*>(((generation & kGenerationMask) << kSlotBits) | slot);
}

// The node behind a live view, or nullptr if the view belongs to an earlier call.
const json* Decode(const SandboxRuntime* rt, const void* p) {
  const auto bits = reinterpret_cast<uintptr_t>(p);
  const uint64_t slot = bits & kSlotMask;
  if ((bits >> kSlotBits) != (rt->generation & kGenerationMask) || slot >= rt->views.size()) {
    return nullptr;
  }
  return rt->views[slot];
}

// The slot of `node` in this call, adding it if new; kMaxViewsPerCall when full.
// Pure C++: no Lua calls, so nothing here can be unwound by a Lua error.
size_t SlotFor(SandboxRuntime* rt, const json* node) {
  auto& views = rt->views;
  if (views.size() <= kLinearScanSlots) {
    for (size_t i = 0; i < views.size(); ++i) {
      if (views[i] == node) return i;
    }
  } else if (const auto it = rt->view_index.find(node); it != rt->view_index.end()) {
    return it->second;
  }
  if (views.size() >= kMaxViewsPerCall) return kMaxViewsPerCall;
  views.push_back(node);
  const size_t slot = views.size() - 1;
  if (views.size() == kLinearScanSlots + 1) {
    for (size_t i = 0; i < views.size(); ++i) rt->view_index.emplace(views[i], static_cast<uint32_t>(i));
  } else if (views.size() > kLinearScanSlots + 1) {
    rt->view_index.emplace(node, static_cast<uint32_t>(slot));
  }
  return slot;
}

// The JSON helpers below finish (and destroy any temporaries) before the caller makes
// its next Lua API call, so a Lua error never unwinds over a live C++ object.
const json* FindMember(const json& object, std::string_view key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// The member after `key` (or the first one when `key` is null), or nullptr at the end.
// *found is false when `key` is not a member.
const json* NextMember(const json& object, const char* key, size_t key_len,
                       std::string_view* next_key, bool* found) {
  *found = true;
  auto it = object.begin();
  if (key != nullptr) {
    it = object.find(std::string_view(key, key_len));
    if (it == object.end()) {
      *found = false;
      return nullptr;
    }
    ++it;
  }
  if (it == object.end()) return nullptr;
  *next_key = it.key();
  return &*it;
}

const json* AliveView(lua_State* L, int idx) {
  const json* node = Decode(RuntimeOf(L), lua_touserdata(L, idx));
  if (node == nullptr) {
    luaL_error(L, "a workload or cluster view was used after the hook call that received it "
                  "returned; views cannot be kept between calls");
  }
  return node;
}

// For functions Lua code can call with any argument (the pairs iterator).
const json* CheckedView(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TLIGHTUSERDATA) luaL_typeerror(L, idx, "view");
  return AliveView(L, idx);
}

// Read recording. Pure C++ that finishes before the caller's next Lua API call.
// The JSON pointer of `node` when it is part of the recorded workload argument.
const std::string* TrackedPath(const SandboxRuntime* rt, const json* node) {
  if (!rt->recording) return nullptr;
  const auto it = rt->tracked_paths.find(node);
  return it == rt->tracked_paths.end() ? nullptr : &it->second;
}

void NoteRead(SandboxRuntime* rt, const json* node, ViewRead::Kind kind) {
  if (const std::string* path = TrackedPath(rt, node)) rt->reads.push_back({*path, kind});
}

// `parent[token]` was read and gave `child` (null when absent).
void NoteChildRead(SandboxRuntime* rt, const json* parent, std::string_view token, const json* child) {
  const std::string* base = TrackedPath(rt, parent);
  if (base == nullptr) return;
  std::string path = *base + "/";
  for (char ch : token) {  // RFC 6901 escaping
    if (ch == '~') {
      path += "~0";
    } else if (ch == '/') {
      path += "~1";
    } else {
      path += ch;
    }
  }
  if (child != nullptr && (child->is_object() || child->is_array())) rt->tracked_paths.emplace(child, path);
  rt->reads.push_back({std::move(path), ViewRead::Kind::kValue});
}

void PushJson(lua_State* L, const json& value, uint64_t generation) {
  switch (value.type()) {
    case json::value_t::boolean:
      lua_pushboolean(L, *value.get_ptr<const json::boolean_t*>() ? 1 : 0);
      return;
    case json::value_t::number_integer:
      lua_pushinteger(L, *value.get_ptr<const json::number_integer_t*>());
      return;
    case json::value_t::number_unsigned: {
      const auto u = *value.get_ptr<const json::number_unsigned_t*>();
      if (u <= static_cast<uint64_t>(std::numeric_limits<lua_Integer>::max())) {
        lua_pushinteger(L, static_cast<lua_Integer>(u));
      } else {
        lua_pushnumber(L, static_cast<lua_Number>(u));
      }
      return;
    }
    case json::value_t::number_float:
      lua_pushnumber(L, *value.get_ptr<const json::number_float_t*>());
      return;
    case json::value_t::string: {
      const auto* s = value.get_ptr<const json::string_t*>();
      lua_pushlstring(L, s->data(), s->size());
      return;
    }
    case json::value_t::object:
    case json::value_t::array:
      PushView(L, &value, generation);
      return;
    default:  // null, binary, discarded
      lua_pushnil(L);
      return;
  }
}

int ViewIndex(lua_State* L) {
  const json& node = *AliveView(L, 1);
  SandboxRuntime* rt = RuntimeOf(L);
  const json* child = nullptr;
  if (node.is_object()) {
    if (lua_type(L, 2) == LUA_TSTRING) {
      size_t len = 0;
      const char* key = lua_tolstring(L, 2, &len);
      child = FindMember(node, std::string_view(key, len));
      NoteChildRead(rt, &node, std::string_view(key, len), child);
    }
  } else if (node.is_array() && lua_type(L, 2) == LUA_TNUMBER) {
    int is_integer = 0;
    const lua_Integer i = lua_tointegerx(L, 2, &is_integer);
    if (is_integer && i >= 1 && static_cast<uint64_t>(i) <= node.size()) {
      child = &node[static_cast<size_t>(i - 1)];
    }
    // Out of range gives nil: that depends on the length, which the read records too.
    if (is_integer && i >= 1) NoteChildRead(rt, &node, std::to_string(i - 1), child);
    if (is_integer && i < 1) NoteRead(rt, &node, ViewRead::Kind::kValue);
  }
  if (child == nullptr) {
    lua_pushnil(L);
  } else {
    PushJson(L, *child, RuntimeOf(L)->generation);
  }
  return 1;
}

int ViewNewIndex(lua_State* L) {
  return luaL_error(L, "attempt to modify a read-only view (workload and cluster views are "
                       "read-only)");
}

int ViewLen(lua_State* L) {
  const json& node = *AliveView(L, 1);
  NoteRead(RuntimeOf(L), &node, ViewRead::Kind::kLength);
  lua_pushinteger(L, node.is_array() ? static_cast<lua_Integer>(node.size()) : 0);
  return 1;
}

int ViewNext(lua_State* L) {
  const json& node = *CheckedView(L, 1);
  NoteRead(RuntimeOf(L), &node, ViewRead::Kind::kWhole);  // the iterator may be called on its own
  const uint64_t generation = RuntimeOf(L)->generation;
  if (!node.is_object() && !node.is_array()) {
    lua_pushnil(L);
    return 1;
  }
  if (node.is_array()) {
    lua_Integer i = 0;
    if (!lua_isnoneornil(L, 2)) i = luaL_checkinteger(L, 2);
    if (i < 0 || static_cast<uint64_t>(i) >= node.size()) {
      lua_pushnil(L);
      return 1;
    }
    lua_pushinteger(L, i + 1);
    PushJson(L, node[static_cast<size_t>(i)], generation);
    return 2;
  }
  const char* key = nullptr;
  size_t key_len = 0;
  if (!lua_isnoneornil(L, 2)) key = luaL_checklstring(L, 2, &key_len);
  std::string_view next_key;
  bool found = true;
  const json* value = NextMember(node, key, key_len, &next_key, &found);
  if (!found) return luaL_error(L, "invalid key to 'next'");
  if (value == nullptr) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushlstring(L, next_key.data(), next_key.size());
  PushJson(L, *value, generation);
  return 2;
}

int ViewPairs(lua_State* L) {
  NoteRead(RuntimeOf(L), AliveView(L, 1), ViewRead::Kind::kWhole);
  lua_pushcfunction(L, ViewNext);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

int ViewToString(lua_State* L) {
  const json* node = Decode(RuntimeOf(L), lua_touserdata(L, 1));
  lua_pushstring(L, node == nullptr ? "view(dead)" : node->is_array() ? "view(array)" : "view(object)");
  return 1;
}

}  // namespace

void RegisterViewMetatable(lua_State* L) {
  const luaL_Reg kMethods[] = {{"__index", ViewIndex},       {"__newindex", ViewNewIndex},
                               {"__len", ViewLen},           {"__pairs", ViewPairs},
                               {"__tostring", ViewToString}, {nullptr, nullptr}};
  lua_createtable(L, 0, 7);
  luaL_setfuncs(L, kMethods, 0);
  lua_pushboolean(L, 0);  // getmetatable(view) is false; setmetatable cannot replace it
  lua_setfield(L, -2, "__metatable");
  lua_pushlightuserdata(L, nullptr);
  lua_insert(L, -2);
  lua_setmetatable(L, -2);  // the metatable of every light userdata in this state
  lua_pop(L, 1);
}

void PushValue(lua_State* L, const nlohmann::json* value, uint64_t generation) {
  PushJson(L, *value, generation);
}

void PushWorkloadValue(lua_State* L, const nlohmann::json* value, uint64_t generation) {
  SandboxRuntime* rt = RuntimeOf(L);
  if (rt->recording) rt->tracked_paths.emplace(value, std::string());
  PushJson(L, *value, generation);
}

void PushView(lua_State* L, const nlohmann::json* node, uint64_t generation) {
  const size_t slot = SlotFor(RuntimeOf(L), node);
  if (slot >= kMaxViewsPerCall) {
    luaL_error(L, "a hook call may look at most at %d distinct objects and arrays",
               static_cast<int>(kMaxViewsPerCall));
  }
  // Equal nodes get equal slots, so `w.resources == w.resources` holds.
  lua_pushlightuserdata(L, Encode(generation, static_cast<uint32_t>(slot)));
}

}  // namespace gpufed::policy::internal
