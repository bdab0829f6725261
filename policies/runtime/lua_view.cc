#include "policies/runtime/lua_view.h"

#include <lua.hpp>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>

#include "policies/runtime/sandbox.h"

namespace gpufed::policy::internal {
namespace {

using nlohmann::json;

constexpr char kViewMetaKey = 0;

struct View {
  const json* node;
  uint64_t generation;
};
static_assert(std::is_trivially_destructible_v<View>);

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

View* AliveView(lua_State* L, int idx) {
  auto* view = static_cast<View*>(lua_touserdata(L, idx));
  if (view->generation != RuntimeOf(L)->generation) {
    luaL_error(L, "a workload or cluster view was used after the hook call that received it "
                  "returned; views cannot be kept between calls");
  }
  return view;
}

// For functions Lua code can call with any argument (the pairs iterator).
View* CheckedView(lua_State* L, int idx) {
  bool is_view = false;
  if (lua_type(L, idx) == LUA_TUSERDATA && lua_getmetatable(L, idx) != 0) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &kViewMetaKey);
    is_view = lua_rawequal(L, -1, -2) != 0;
    lua_pop(L, 2);
  }
  if (!is_view) luaL_typeerror(L, idx, "view");
  return AliveView(L, idx);
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
  const View* view = AliveView(L, 1);
  const json& node = *view->node;
  const json* child = nullptr;
  if (node.is_object()) {
    if (lua_type(L, 2) == LUA_TSTRING) {
      size_t len = 0;
      const char* key = lua_tolstring(L, 2, &len);
      child = FindMember(node, std::string_view(key, len));
    }
  } else if (node.is_array() && lua_type(L, 2) == LUA_TNUMBER) {
    int is_integer = 0;
    const lua_Integer i = lua_tointegerx(L, 2, &is_integer);
    if (is_integer && i >= 1 && static_cast<uint64_t>(i) <= node.size()) {
      child = &node[static_cast<size_t>(i - 1)];
    }
  }
  if (child == nullptr) {
    lua_pushnil(L);
  } else {
    PushJson(L, *child, view->generation);
  }
  return 1;
}

int ViewNewIndex(lua_State* L) {
  return luaL_error(L, "attempt to modify a read-only view (workload and cluster views are "
                       "read-only)");
}

int ViewLen(lua_State* L) {
  const View* view = AliveView(L, 1);
  const json& node = *view->node;
  lua_pushinteger(L, node.is_array() ? static_cast<lua_Integer>(node.size()) : 0);
  return 1;
}

int ViewNext(lua_State* L) {
  const View* view = CheckedView(L, 1);
  const json& node = *view->node;
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
    PushJson(L, node[static_cast<size_t>(i)], view->generation);
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
  PushJson(L, *value, view->generation);
  return 2;
}

int ViewPairs(lua_State* L) {
  AliveView(L, 1);
  lua_pushcfunction(L, ViewNext);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

int ViewToString(lua_State* L) {
  const auto* view = static_cast<const View*>(lua_touserdata(L, 1));
  if (view->generation != RuntimeOf(L)->generation) {
    lua_pushliteral(L, "view(dead)");
  } else {
    lua_pushstring(L, view->node->is_array() ? "view(array)" : "view(object)");
  }
  return 1;
}

// Two views are equal when they show the same JSON node in the same call.
int ViewEq(lua_State* L) {
  const auto* a = static_cast<const View*>(lua_touserdata(L, 1));
  const auto* b = static_cast<const View*>(lua_touserdata(L, 2));
  bool equal = false;
  if (a != nullptr && b != nullptr && lua_getmetatable(L, 1) != 0 && lua_getmetatable(L, 2) != 0) {
    equal = lua_rawequal(L, -1, -2) != 0 && a->node == b->node && a->generation == b->generation;
  }
  lua_pushboolean(L, equal ? 1 : 0);
  return 1;
}

}  // namespace

void RegisterViewMetatable(lua_State* L) {
  const luaL_Reg kMethods[] = {{"__index", ViewIndex},       {"__newindex", ViewNewIndex},
                               {"__len", ViewLen},           {"__pairs", ViewPairs},
                               {"__tostring", ViewToString}, {"__eq", ViewEq},
                               {nullptr, nullptr}};
  lua_createtable(L, 0, 7);
  luaL_setfuncs(L, kMethods, 0);
  lua_pushboolean(L, 0);  // getmetatable(view) is false; setmetatable cannot replace it
  lua_setfield(L, -2, "__metatable");
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kViewMetaKey);
}

void PushValue(lua_State* L, const nlohmann::json* value, uint64_t generation) {
  PushJson(L, *value, generation);
}

void PushView(lua_State* L, const nlohmann::json* node, uint64_t generation) {
  auto* view = static_cast<View*>(lua_newuserdatauv(L, sizeof(View), 0));
  view->node = node;
  view->generation = generation;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kViewMetaKey);
  lua_setmetatable(L, -2);
}

}  // namespace gpufed::policy::internal
