#include "policies/runtime/lua_policy.h"

#include <lua.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "policies/runtime/lua_view.h"
#include "policies/runtime/sandbox.h"
#include "policies/runtime/text_util.h"

namespace gpufed::policy {
namespace {

using internal::SandboxRuntime;

constexpr const char* kHookNames[] = {"admit", "filter", "score"};
constexpr size_t kMaxErrorMessageBytes = 1024;

// The frames below are plain structs owned by the C++ caller of lua_pcall; the
// lua_CFunctions that read them hold nothing that needs unwinding.
struct LoadFrame {
  const char* source;
  size_t size;
  const char* chunk_name;
  int refs[3];
  int lines[3];
  int params[3];
  bool vararg[3];
};

int LoadChunk(lua_State* L) {
  auto* frame = static_cast<LoadFrame*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  // "t": text only. Precompiled chunks can crash the VM.
  if (luaL_loadbufferx(L, frame->source, frame->size, frame->chunk_name, "t") != LUA_OK) {
    return lua_error(L);
  }
  internal::PushEnvProxy(L);
  if (lua_setupvalue(L, 1, 1) == nullptr) lua_pop(L, 1);
  lua_pushvalue(L, 1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, frame);  // keep the chunk for executable_lines()
  lua_call(L, 0, 0);
  internal::FreezeEnv(L);
  internal::PushEnvLayer(L);
  for (int i = 0; i < 3; ++i) {
    lua_pushstring(L, kHookNames[i]);
    lua_rawget(L, 1);  // the file's own globals only, not the sandbox's
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    if (!lua_isfunction(L, -1)) {
      return luaL_error(L, "global '%s' must be a function, got %s", kHookNames[i], luaL_typename(L, -1));
    }
    lua_Debug ar;
    lua_pushvalue(L, -1);
    lua_getinfo(L, ">Su", &ar);
    frame->lines[i] = ar.linedefined > 0 ? ar.linedefined : 0;
    frame->params[i] = ar.nparams;
    frame->vararg[i] = ar.isvararg != 0;
    frame->refs[i] = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  return 0;
}

// Walks the functions and tables reachable from the file's globals, upvalues and main
// chunk, collecting the lines that hold code.
struct LinesFrame {
  const void* chunk_key;
  std::set<int>* lines;
};

int CollectLines(lua_State* L) {
  auto* frame = static_cast<LinesFrame*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  lua_newtable(L);  // 1: visited
  lua_newtable(L);  // 2: work list
  lua_Integer pending = 0;
  internal::PushEnvLayer(L);
  lua_rawseti(L, 2, ++pending);
  lua_rawgetp(L, LUA_REGISTRYINDEX, frame->chunk_key);
  lua_rawseti(L, 2, ++pending);
  while (pending > 0) {
    lua_rawgeti(L, 2, pending);  // 3: item
    lua_pushnil(L);
    lua_rawseti(L, 2, pending--);
    lua_pushvalue(L, 3);
    if (lua_rawget(L, 1) != LUA_TNIL || (!lua_istable(L, 3) && !lua_isfunction(L, 3))) {
      lua_settop(L, 2);
      continue;
    }
    lua_pop(L, 1);
    lua_pushvalue(L, 3);
    lua_pushboolean(L, 1);
    lua_rawset(L, 1);
    if (lua_isfunction(L, 3)) {
      if (!lua_iscfunction(L, 3)) {
        lua_Debug ar;
        lua_pushvalue(L, 3);
        lua_getinfo(L, ">L", &ar);  // pushes {line = true}
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
          lua_pop(L, 1);
          frame->lines->insert(static_cast<int>(lua_tointeger(L, -1)));
        }
        lua_pop(L, 1);
      }
      for (int up = 1; lua_getupvalue(L, 3, up) != nullptr; ++up) lua_rawseti(L, 2, ++pending);
    } else {
      lua_pushnil(L);
      while (lua_next(L, 3) != 0) {
        lua_rawseti(L, 2, ++pending);        // the value
        lua_pushvalue(L, -1);
        lua_rawseti(L, 2, ++pending);        // the key
      }
    }
    lua_settop(L, 2);
  }
  return 0;
}

struct CallFrame {
  int ref;
  const nlohmann::json* w;
  const nlohmann::json* c;
  uint64_t generation;
  const nlohmann::json* params;  // the Policy's params, passed last; may be null
  int results = 2;               // values kept from the hook (filter: 3)
};

int CallHook(lua_State* L) {
  const auto* frame = static_cast<const CallFrame*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  lua_rawgeti(L, LUA_REGISTRYINDEX, frame->ref);
  internal::PushWorkloadValue(L, frame->w, frame->generation);
  int nargs = 1;
  if (frame->c != nullptr) {
    internal::PushValue(L, frame->c, frame->generation);
    ++nargs;
  }
  if (frame->params != nullptr) {
    internal::PushValue(L, frame->params, frame->generation);
    ++nargs;
  }
  lua_call(L, nargs, frame->results);
  return frame->results;
}

// A filter's third value, read by CollectPools: pool name -> reason, or what was wrong.
struct PoolsFrame {
  std::vector<std::pair<std::string, std::string>>* out;
  size_t max_bytes;
  int key_type = LUA_TNONE;  // an entry that is not string = string: its types
  int value_type = LUA_TNONE;
  bool too_many = false;
};

// Walks the table at 1 (raw: a metatable plays no part) into the frame at 2.
int CollectPools(lua_State* L) {
  auto* frame = static_cast<PoolsFrame*>(lua_touserdata(L, 2));
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING || lua_type(L, -1) != LUA_TSTRING) {
      frame->key_type = lua_type(L, -2);
      frame->value_type = lua_type(L, -1);
      return 0;
    }
    if (frame->out->size() == kMaxDeniedPools) {
      frame->too_many = true;
      return 0;
    }
    size_t name_len = 0, reason_len = 0;
    const char* name = lua_tolstring(L, -2, &name_len);  // strings already: no conversion
    const char* reason = lua_tolstring(L, -1, &reason_len);
    frame->out->emplace_back(internal::SanitizeText(std::string_view(name, name_len), frame->max_bytes),
                             internal::SanitizeText(std::string_view(reason, reason_len), frame->max_bytes));
    lua_pop(L, 1);  // the value; the key stays for lua_next
  }
  return 0;
}

// Lua's abbreviation of a "@file" chunk name in messages (luaO_chunkid, LUA_IDSIZE).
std::string ShortSource(const std::string& path) {
  constexpr size_t kIdSize = LUA_IDSIZE;
  if (path.size() + 1 <= kIdSize) return path;
  return "..." + path.substr(path.size() - (kIdSize - 4));
}

// Lua names the variable of some of its errors ("attempt to index a nil value (field
// 'labels')") but not of others ("attempt to compare nil with number"): those get the line
// of code they come from, so the author sees which field was nil.
std::string Located(std::string message, std::string_view source, int line) {
  // Only the interpreter's own errors: a policy's error("...") says what it means.
  if (!message.starts_with("attempt to ")) return message;
  for (const char* hint : {"(field '", "(local '", "(global '", "(upvalue '", "(constant '", "(method '"}) {
    if (message.find(hint) != std::string::npos) return message;
  }
  if (line <= 0) return message;
  size_t begin = 0;
  for (int l = 1; l < line && begin != std::string_view::npos; ++l) {
    begin = source.find('\n', begin);
    if (begin != std::string_view::npos) ++begin;
  }
  if (begin == std::string_view::npos || begin >= source.size()) return message;
  std::string_view text = source.substr(begin, source.find('\n', begin) - begin);
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  if (text.empty()) return message;
  constexpr size_t kMaxQuoted = 160;
  message.append(" in: ").append(text.substr(0, kMaxQuoted));
  if (text.size() > kMaxQuoted) message.append("...");
  return message;
}

// Splits "<short_source>:<line>: message"; returns the line or 0 if there is no prefix.
int StripPosition(const std::string& short_source, std::string* message) {
  if (message->compare(0, short_source.size(), short_source) != 0) return 0;
  size_t i = short_source.size();
  if (i >= message->size() || (*message)[i] != ':') return 0;
  int line = 0;
  size_t j = i + 1;
  while (j < message->size() && j < i + 10 && std::isdigit(static_cast<unsigned char>((*message)[j]))) {
    line = line * 10 + ((*message)[j++] - '0');
  }
  if (j == i + 1 || message->compare(j, 2, ": ") != 0) return 0;
  message->erase(0, j + 2);
  return line;
}

}  // namespace

LuaPolicyFile::LuaPolicyFile(std::string policy_name, std::string file_path, const LuaLimits& limits)
    : policy_name_(std::move(policy_name)),
      file_path_(std::move(file_path)),
      short_source_(ShortSource(file_path_)),
      runtime_(std::make_unique<SandboxRuntime>(limits)) {}

LuaPolicyFile::~LuaPolicyFile() {
  if (state_ != nullptr) lua_close(state_);  // before runtime_, which the allocator uses
}

HookError LuaPolicyFile::MakeError(HookErrorKind kind, int line, const std::string& message) const {
  return HookError{kind, policy_name_, file_path_, line, internal::SanitizeText(message, kMaxErrorMessageBytes)};
}

bool LuaPolicyFile::Protected(int (*fn)(lua_State*), void* frame, int nresults, bool budgeted, const HookContext* ctx,
                              HookError* error) {
  lua_State* L = state_;
  SandboxRuntime* rt = runtime_.get();
  lua_settop(L, 0);
  lua_pushcfunction(L, internal::MessageHandler);
  lua_pushcfunction(L, fn);
  lua_pushlightuserdata(L, frame);
  internal::BeginCall(L, rt, ctx, budgeted);
  const int status = lua_pcall(L, 1, nresults, 1);
  internal::EndCall(L, rt);
  if (status == LUA_OK && !rt->AnyLimitHit()) return true;

  const int default_kind =
      rt->loading ? static_cast<int>(HookErrorKind::kLoad) : static_cast<int>(HookErrorKind::kRuntime);
  auto kind = static_cast<HookErrorKind>(default_kind);
  std::string message;
  int line = rt->error_line;
  if (rt->deadline_exceeded) {
    kind = HookErrorKind::kDeadline;
    message = "wall-clock limit of " + std::to_string(rt->limits.wall_time_ms) + " ms exceeded";
  } else if (rt->budget_exhausted) {
    kind = HookErrorKind::kBudget;
    message = "instruction budget of " + std::to_string(rt->limits.instructions) + " exhausted";
  } else if (rt->memory_exceeded || status == LUA_ERRMEM) {
    kind = HookErrorKind::kMemory;
    message = "memory limit of " + std::to_string(rt->limits.memory_bytes) + " bytes exceeded";
    line = 0;  // where the allocation failed is not known
  } else if (rt->depth_exceeded) {
    kind = HookErrorKind::kDepth;
    message = "call depth limit of " + std::to_string(rt->limits.max_depth) + " exceeded";
  } else {
    // The error object, without running any policy code (__tostring) to describe it.
    const int type = lua_type(L, -1);
    if (type == LUA_TSTRING) {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      message.assign(s, std::min(len, 4 * kMaxErrorMessageBytes));
      const int prefix_line = StripPosition(short_source_, &message);
      if (prefix_line > 0) line = prefix_line;
      if (kind == HookErrorKind::kRuntime) message = Located(std::move(message), source_, line);
    } else if (type == LUA_TNUMBER) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.14g", lua_tonumber(L, -1));
      message = buf;
    } else if (type == LUA_TNIL || type == LUA_TNONE) {
      message = "error object is nil";
    } else {
      message = std::string("error object is a ") + lua_typename(L, type) + " value";
    }
    if (status == LUA_ERRERR) message = "error in error handling: " + message;
  }
  lua_settop(L, 0);
  // Whatever the policy left behind (a half-built memory bomb) goes now, so the next
  // call starts with the memory of a clean state.
  lua_gc(L, LUA_GCCOLLECT, 0);
  *error = MakeError(kind, line, message);
  return false;
}

HookResult<std::unique_ptr<LuaPolicyFile>> LuaPolicyFile::Load(std::string policy_name, std::string file_path,
                                                               std::string_view source, const LuaLimits& limits) {
  std::unique_ptr<LuaPolicyFile> file(new LuaPolicyFile(std::move(policy_name), std::move(file_path), limits));
  file->source_ = std::string(source);
  SandboxRuntime* rt = file->runtime_.get();
  file->state_ = internal::NewSandboxState(rt);
  if (file->state_ == nullptr) {
    return file->MakeError(HookErrorKind::kMemory, 0, "memory limit too small for a Lua state");
  }
  HookError error;
  if (!file->Protected(internal::OpenSandbox, nullptr, 0, false, nullptr, &error)) {
    error.kind = error.kind == HookErrorKind::kRuntime ? HookErrorKind::kLoad : error.kind;
    return error;
  }
  const std::string chunk_name = "@" + file->file_path_;
  LoadFrame frame{source.data(), source.size(), chunk_name.c_str(),   {LUA_NOREF, LUA_NOREF, LUA_NOREF},
                  {0, 0, 0},     {0, 0, 0},     {false, false, false}};
  rt->loading = true;
  const bool loaded = file->Protected(LoadChunk, &frame, 0, true, nullptr, &error);
  rt->loading = false;
  if (!loaded) return error;
  file->refs_ = Refs{frame.refs[0], frame.refs[1], frame.refs[2], frame.lines[0], frame.lines[1], frame.lines[2]};
  for (int i = 0; i < 3; ++i) {
    if (frame.refs[i] != LUA_NOREF)
      file->signatures_[i] = HookSignature{frame.lines[i], frame.params[i], frame.vararg[i]};
  }
  LinesFrame lines{&frame, &file->executable_lines_};
  if (!file->Protected(CollectLines, &lines, 0, false, nullptr, &error)) {
    error.kind = HookErrorKind::kLoad;
    return error;
  }
  lua_pushnil(file->state_);  // the chunk is no longer needed
  lua_rawsetp(file->state_, LUA_REGISTRYINDEX, &frame);
  lua_gc(file->state_, LUA_GCCOLLECT, 0);
  return file;
}

bool LuaPolicyFile::has_admit() const { return refs_.admit != LUA_NOREF; }
bool LuaPolicyFile::has_filter() const { return refs_.filter != LUA_NOREF; }
bool LuaPolicyFile::has_score() const { return refs_.score != LUA_NOREF; }

std::optional<HookSignature> LuaPolicyFile::signature(std::string_view hook) const {
  for (int i = 0; i < 3; ++i) {
    if (hook == kHookNames[i]) return signatures_[i];
  }
  return std::nullopt;
}

std::set<std::string> LuaPolicyFile::defined_hooks() const {
  std::set<std::string> hooks;
  if (has_admit()) hooks.insert("admit");
  if (has_filter()) hooks.insert("filter");
  if (has_score()) hooks.insert("score");
  return hooks;
}

HookResult<Verdict> LuaPolicyFile::CallVerdict(const char* hook, int ref, int line, const nlohmann::json& w,
                                               const nlohmann::json* c, const HookContext& ctx) {
  if (ref == LUA_NOREF) {
    return MakeError(HookErrorKind::kNotDefined, 0, std::string(hook) + " is not defined");
  }
  // filter may name pools it denies as a third value; admit's third is not looked at.
  const bool pools = c != nullptr;
  CallFrame frame{ref, &w, c, runtime_->generation, ctx.params, pools ? 3 : 2};
  HookError error;
  if (!Protected(CallHook, &frame, frame.results, true, &ctx, &error)) return error;
  lua_State* L = state_;
  const int at = pools ? -1 : 0;  // the third value, when kept, is on top
  const int allowed_type = lua_type(L, at - 2);
  const int reason_type = lua_type(L, at - 1);
  if (allowed_type != LUA_TBOOLEAN) {
    lua_settop(L, 0);
    return MakeError(HookErrorKind::kBadReturn, line,
                     std::string(hook) + " must return a boolean, got " + lua_typename(L, allowed_type));
  }
  if (reason_type != LUA_TSTRING && reason_type != LUA_TNIL) {
    lua_settop(L, 0);
    return MakeError(
        HookErrorKind::kBadReturn, line,
        std::string(hook) + " must return a string or nil as the reason, got " + lua_typename(L, reason_type));
  }
  Verdict verdict;
  verdict.allowed = lua_toboolean(L, at - 2) != 0;
  if (reason_type == LUA_TSTRING) {
    size_t len = 0;
    const char* s = lua_tolstring(L, at - 1, &len);  // a string already: no conversion
    verdict.reason = internal::SanitizeText(std::string_view(s, len), runtime_->limits.max_reason_bytes);
  }
  // A denied cluster's pools do not matter (a third value there is not read).
  if (pools && verdict.allowed) {
    if (std::optional<HookError> bad = ReadDeniedPools(L, line, verdict.denied_pools)) {
      lua_settop(L, 0);
      return *bad;
    }
  }
  lua_settop(L, 0);
  return verdict;
}

std::optional<HookError> LuaPolicyFile::ReadDeniedPools(lua_State* L, int line,
                                                        std::vector<std::pair<std::string, std::string>>& out) const {
  const int type = lua_type(L, -1);
  if (type == LUA_TNIL) return std::nullopt;
  auto bad = [&](const std::string& what) -> std::optional<HookError> {
    return MakeError(HookErrorKind::kBadReturn, line,
                     "filter's third value must be a table of pool name = reason strings; " + what);
  };
  if (type != LUA_TTABLE) return bad(std::string("got ") + lua_typename(L, type));
  // lua_next may raise: the walk runs under lua_pcall, like every call into Lua here.
  PoolsFrame frame{&out, runtime_->limits.max_reason_bytes};
  lua_pushcfunction(L, CollectPools);
  lua_pushvalue(L, -2);
  lua_pushlightuserdata(L, &frame);
  if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
    lua_pop(L, 1);  // the error object
    return bad("it could not be read");
  }
  if (frame.key_type != LUA_TNONE) {
    return bad(std::string("got ") + lua_typename(L, frame.key_type) + " = " + lua_typename(L, frame.value_type));
  }
  if (frame.too_many) return bad("more than " + std::to_string(kMaxDeniedPools) + " pools");
  std::sort(out.begin(), out.end());  // table order is not deterministic
  return std::nullopt;
}

HookResult<Verdict> LuaPolicyFile::Admit(const nlohmann::json& w, const HookContext& ctx) {
  return CallVerdict("admit", refs_.admit, refs_.admit_line, w, nullptr, ctx);
}

HookResult<Verdict> LuaPolicyFile::Filter(const nlohmann::json& w, const nlohmann::json& c, const HookContext& ctx) {
  return CallVerdict("filter", refs_.filter, refs_.filter_line, w, &c, ctx);
}

HookResult<double> LuaPolicyFile::Score(const nlohmann::json& w, const nlohmann::json& c, const HookContext& ctx) {
  if (refs_.score == LUA_NOREF) return MakeError(HookErrorKind::kNotDefined, 0, "score is not defined");
  CallFrame frame{refs_.score, &w, &c, runtime_->generation, ctx.params};
  HookError error;
  if (!Protected(CallHook, &frame, 2, true, &ctx, &error)) return error;
  lua_State* L = state_;
  const int type = lua_type(L, -2);
  const double value = type == LUA_TNUMBER ? lua_tonumber(L, -2) : 0;
  lua_settop(L, 0);
  if (type != LUA_TNUMBER) {
    return MakeError(HookErrorKind::kBadReturn, refs_.score_line,
                     std::string("score must return a number, got ") + lua_typename(L, type));
  }
  if (!std::isfinite(value)) {
    return MakeError(HookErrorKind::kBadReturn, refs_.score_line,
                     "score must return a finite number, got " +
                         std::string(std::isnan(value) ? "NaN" : (value > 0 ? "inf" : "-inf")));
  }
  return value;
}

void LuaPolicyFile::EnableCoverage(bool enabled) { runtime_->coverage_enabled = enabled; }

void LuaPolicyFile::RecordReads(bool on) { runtime_->recording = on; }

std::vector<ViewRead> LuaPolicyFile::TakeReads() {
  std::vector<ViewRead> reads = std::move(runtime_->reads);
  runtime_->reads.clear();
  std::sort(reads.begin(), reads.end());
  reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
  return reads;
}
const std::set<int>& LuaPolicyFile::covered_lines() const { return runtime_->covered_lines; }
const std::string& LuaPolicyFile::last_log() const { return runtime_->log; }
size_t LuaPolicyFile::memory_in_use() const { return runtime_->used_bytes; }

}  // namespace gpufed::policy
