#include "policies/runtime/lua_guards.h"

#include <lua.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "policies/runtime/sandbox.h"

namespace gpufed::policy::internal {
namespace {

// --- a model of Lua pattern items, just enough to bound the matcher's work ----------

bool MatchClass(unsigned char c, unsigned char cl) {
  bool res;
  switch (std::tolower(cl)) {
    case 'a': res = std::isalpha(c); break;
    case 'c': res = std::iscntrl(c); break;
    case 'd': res = std::isdigit(c); break;
    case 'g': res = std::isgraph(c); break;
    case 'l': res = std::islower(c); break;
    case 'p': res = std::ispunct(c); break;
    case 's': res = std::isspace(c); break;
    case 'u': res = std::isupper(c); break;
    case 'w': res = std::isalnum(c); break;
    case 'x': res = std::isxdigit(c); break;
    default: return cl == c;  // an escaped literal such as %.
  }
  return std::isupper(cl) ? !res : res;
}

// Index just past the single-character class starting at p[i] ('.', '%x', '[set]' or a
// literal); p.size() for a malformed class, which the real matcher will reject.
size_t ClassEnd(std::string_view p, size_t i) {
  if (p[i] == '%') return std::min(i + 2, p.size());
  if (p[i] != '[') return i + 1;
  size_t j = i + 1;
  if (j < p.size() && p[j] == '^') ++j;
  do {  // the first character of a set is a member even if it is ']'
    if (j >= p.size()) return p.size();
    if (p[j++] == '%' && j < p.size()) ++j;
  } while (j < p.size() && p[j] != ']');
  return std::min(j + 1, p.size());
}

// `open` indexes '[' and `close` the matching ']'.
bool MatchSet(unsigned char c, std::string_view p, size_t open, size_t close) {
  size_t j = open;
  bool member = true;
  if (p[j + 1] == '^') {
    member = false;
    ++j;
  }
  while (++j < close) {
    const auto pc = static_cast<unsigned char>(p[j]);
    if (pc == '%' && j + 1 < close) {
      ++j;
      if (MatchClass(c, static_cast<unsigned char>(p[j]))) return member;
    } else if (j + 2 < close && p[j + 1] == '-') {
      if (pc <= c && c <= static_cast<unsigned char>(p[j + 2])) return member;
      j += 2;
    } else if (pc == c) {
      return member;
    }
  }
  return !member;
}

bool SingleMatch(unsigned char c, std::string_view p, size_t i, size_t end) {
  switch (p[i]) {
    case '.': return true;
    case '%': return i + 1 < end && MatchClass(c, static_cast<unsigned char>(p[i + 1]));
    case '[': return end >= i + 2 && p[end - 1] == ']' && MatchSet(c, p, i, end - 1);
    default: return static_cast<unsigned char>(p[i]) == c;
  }
}

double LongestRun(std::string_view s, std::string_view p, size_t i, size_t end) {
  size_t best = 0, run = 0;
  for (unsigned char c : s) {
    run = SingleMatch(c, p, i, end) ? run + 1 : 0;
    best = std::max(best, run);
  }
  return static_cast<double>(best);
}

int64_t ToUnits(double units) {
  if (!(units < 1e15)) return static_cast<int64_t>(1e15);  // also catches NaN and inf
  return static_cast<int64_t>(std::max(units, 0.0));
}

// --- the guard wrapper ------------------------------------------------------------

enum Guard : int { kFind, kMatch, kGmatch, kGsub, kInsert, kRemove, kMove, kSort, kSpan, kLinear };

double LengthOf(lua_State* L, int idx) {
  const int type = lua_type(L, idx);
  if (type != LUA_TTABLE && type != LUA_TUSERDATA) return 0;
  return static_cast<double>(luaL_len(L, idx));  // honours __len, like the library does
}

double IntegerArg(lua_State* L, int idx, double fallback) {
  int ok = 0;
  const lua_Integer v = lua_tointegerx(L, idx, &ok);
  return ok ? static_cast<double>(v) : fallback;
}

// Work the wrapped function may do in C, in budget units (one ~ one VM instruction).
int64_t GuardUnits(lua_State* L, Guard guard) {
  const int nargs = lua_gettop(L);
  switch (guard) {
    case kFind:
    case kMatch:
    case kGmatch:
    case kGsub: {
      size_t n = 0, m = 0;
      const char* s = luaL_checklstring(L, 1, &n);
      const char* p = luaL_checklstring(L, 2, &m);
      const bool plain = guard == kFind && lua_toboolean(L, 4);
      return ToUnits(PatternStepBound({s, n}, {p, m}, guard != kGmatch, plain) /
                     kPatternStepsPerUnit);
    }
    case kInsert:  // table.insert(t, pos, v) shifts #t - pos elements; appending is O(1)
      return nargs >= 3 ? ToUnits(LengthOf(L, 1) / 4) : 0;
    case kRemove:
      return nargs >= 2 ? ToUnits(LengthOf(L, 1) / 4) : 0;
    case kMove:  // table.move(a1, f, e, t [,a2])
      return ToUnits((IntegerArg(L, 3, 0) - IntegerArg(L, 2, 0) + 1) / 4);
    case kSort: {
      const double n = LengthOf(L, 1);
      return ToUnits(n * std::log2(n + 2) / 4);
    }
    case kSpan: {  // table.concat(t, sep, i, j), table.unpack(t, i, j)
      const int first = guard == kSpan && lua_type(L, 2) == LUA_TSTRING ? 3 : 2;
      const bool explicit_end = lua_type(L, first + 1) == LUA_TNUMBER;
      const double end = explicit_end ? IntegerArg(L, first + 1, 0) : LengthOf(L, 1);
      return ToUnits((end - IntegerArg(L, first, 1) + 1) / 4);
    }
    case kLinear: {
      double bytes = 0;
      for (int i = 1; i <= nargs; ++i) {
        if (lua_type(L, i) == LUA_TSTRING) bytes += static_cast<double>(lua_rawlen(L, i));
      }
      return ToUnits(bytes / kBytesPerUnit);
    }
  }
  return 0;
}

// Upvalues: the original function, the Guard.
int Guarded(lua_State* L) {
  const auto guard = static_cast<Guard>(lua_tointeger(L, lua_upvalueindex(2)));
  Charge(L, 1 + GuardUnits(L, guard));
  const int nargs = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, nargs, LUA_MULTRET);
  return lua_gettop(L);
}

// math.random, seeded from HookContext::seed at its first use in each call, so the
// sequence depends only on the call's inputs. Upvalues: random, randomseed.
int Random(lua_State* L) {
  SandboxRuntime* rt = RuntimeOf(L);
  if (!rt->random_seeded) {
    if (rt->recording) rt->reads.push_back({"/name", ViewRead::Kind::kValue});  // the seed's input
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushinteger(L, static_cast<lua_Integer>(rt->context != nullptr ? rt->context->seed : 0));
    lua_call(L, 1, 0);
    rt->random_seeded = true;
  }
  const int nargs = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, nargs, LUA_MULTRET);
  return lua_gettop(L);
}

// Hooks are per thread in Lua: a coroutine without the count hook would run unbounded.
int CoroutineCreate(lua_State* L) {
  const int nargs = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, nargs, 1);
  ArmThread(lua_tothread(L, -1), RuntimeOf(L));
  return 1;
}

// coroutine.wrap returns a C closure whose first upvalue is the new thread.
int CoroutineWrap(lua_State* L) {
  const int nargs = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, nargs, 1);
  if (lua_getupvalue(L, -1, 1) == nullptr || lua_type(L, -1) != LUA_TTHREAD) {
    return luaL_error(L, "coroutine.wrap is unavailable");  // never run an unhooked thread
  }
  ArmThread(lua_tothread(L, -1), RuntimeOf(L));
  lua_pop(L, 1);
  return 1;
}

void Wrap(lua_State* L, int globals, const char* lib, const char* name, lua_CFunction fn,
          int guard) {
  lua_getfield(L, globals, lib);
  lua_getfield(L, -1, name);
  int nup = 1;
  if (guard >= 0) {
    lua_pushinteger(L, guard);
    nup = 2;
  }
  lua_pushcclosure(L, fn, nup);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

}  // namespace

double PatternStepBound(std::string_view s, std::string_view p, bool anchor_allowed,
                        bool plain) {
  const double n = static_cast<double>(s.size());
  if (plain || p.find_first_of("^$*+?.([%-") == std::string_view::npos) {
    return (n + 1) * (static_cast<double>(p.size()) + 1);  // substring search
  }
  size_t i = 0;
  bool anchored = false;
  if (anchor_allowed && p[0] == '^') {
    anchored = true;
    i = 1;
  }
  double product = 1, items = 0, linear = 0;
  while (i < p.size()) {
    const char ch = p[i];
    if (ch == '(' || ch == ')') {
      ++i;
      ++items;
      continue;
    }
    if (ch == '$' && i + 1 == p.size()) break;
    if (ch == '%' && i + 1 < p.size()) {
      const char next = p[i + 1];
      if (next == 'b' || (next >= '0' && next <= '9')) {  // balance, back reference: O(n)
        i += next == 'b' ? 4 : 2;
        ++items;
        linear = std::max(linear, n);
        continue;
      }
      if (next == 'f') {  // frontier: O(1)
        i += 2;
        if (i < p.size() && p[i] == '[') i = ClassEnd(p, i);
        ++items;
        continue;
      }
    }
    const size_t end = ClassEnd(p, i);
    ++items;
    const char quantifier = end < p.size() ? p[end] : '\0';
    if (quantifier == '*' || quantifier == '+' || quantifier == '-') {
      const double run = LongestRun(s, p, i, end);
      product *= run + 1;  // each try of the item can stop at any point of its run
      linear = std::max(linear, run);
      i = end + 1;
    } else if (quantifier == '?') {
      product *= 2;
      i = end + 1;
    } else {
      i = end;
    }
  }
  return (anchored ? 1 : n + 1) * product * (items + 1 + linear);
}

void InstallGuards(lua_State* L, int globals) {
  const struct {
    const char* lib;
    const char* name;
    Guard guard;
  } kGuarded[] = {
      {LUA_STRLIBNAME, "find", kFind},     {LUA_STRLIBNAME, "match", kMatch},
      {LUA_STRLIBNAME, "gmatch", kGmatch}, {LUA_STRLIBNAME, "gsub", kGsub},
      {LUA_TABLIBNAME, "insert", kInsert}, {LUA_TABLIBNAME, "remove", kRemove},
      {LUA_TABLIBNAME, "move", kMove},     {LUA_TABLIBNAME, "sort", kSort},
      {LUA_TABLIBNAME, "concat", kSpan},   {LUA_TABLIBNAME, "unpack", kSpan},
      {LUA_UTF8LIBNAME, "len", kLinear},   {LUA_UTF8LIBNAME, "offset", kLinear},
      {LUA_UTF8LIBNAME, "codepoint", kLinear},
  };
  for (const auto& g : kGuarded) Wrap(L, globals, g.lib, g.name, Guarded, g.guard);
  lua_getfield(L, globals, "tonumber");  // string to number conversion is linear
  lua_pushinteger(L, kLinear);
  lua_pushcclosure(L, Guarded, 2);
  lua_setfield(L, globals, "tonumber");

  Wrap(L, globals, LUA_COLIBNAME, "create", CoroutineCreate, -1);
  Wrap(L, globals, LUA_COLIBNAME, "wrap", CoroutineWrap, -1);

  lua_getfield(L, globals, LUA_MATHLIBNAME);
  lua_getfield(L, -1, "random");
  lua_getfield(L, -2, "randomseed");
  lua_pushcclosure(L, Random, 2);
  lua_setfield(L, -2, "random");
  lua_pushnil(L);
  lua_setfield(L, -2, "randomseed");
  lua_pop(L, 1);

  lua_getfield(L, globals, LUA_STRLIBNAME);
  lua_pushnil(L);  // string.dump would hand out bytecode
  lua_setfield(L, -2, "dump");
  lua_pop(L, 1);
}

}  // namespace gpufed::policy::internal
