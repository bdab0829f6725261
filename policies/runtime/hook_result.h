#pragma once
// The outcome of loading or calling a Lua policy hook: a value, or a HookError that
// names the policy, the file and (when known) the line. Errors are values; nothing in
// the policy runtime throws or aborts because of what a policy does.
#include <cassert>
#include <string>
#include <utility>
#include <variant>

#include "controller/common/status.h"

namespace gpufed::policy {

enum class HookErrorKind {
  kLoad,        // syntax error, or the file's top level raised / defined a hook badly
  kRuntime,     // the hook raised an error (error(), a bad index, a read-only view, ...)
  kBudget,      // the per-call instruction budget ran out
  kDeadline,    // the wall-clock safety net fired (see LuaLimits::wall_time_ms)
  kMemory,      // the per-state memory cap was hit
  kDepth,       // the call depth cap was hit
  kBadReturn,   // wrong type, NaN / infinite score, ...
  kNotDefined,  // the file does not define the hook that was called
};

// "load", "runtime", "budget", ... (stable; used in logs and tests).
const char* HookErrorKindName(HookErrorKind kind);

struct HookError {
  HookErrorKind kind = HookErrorKind::kRuntime;
  std::string policy;  // the Policy resource's name
  std::string file;    // the Lua file path as given to LuaPolicyFile::Load
  int line = 0;        // 1-based line in `file`; 0 when unknown (e.g. memory errors)
  std::string message;

  // "policy 'p' (rules/x.lua:12): message"; the ":12" is omitted when line is 0.
  std::string ToString() const;
  // kInvalidArgument for load errors (terminal until the policy changes), kResourceExhausted
  // for budget, deadline, memory and depth, kFailedPrecondition otherwise.
  Status ToStatus() const;
};

// Either a T or a HookError. Accessing the wrong alternative is a bug (asserted).
template <typename T>
class [[nodiscard]] HookResult {
 public:
  HookResult(T value) : state_(std::move(value)) {}         // NOLINT: implicit by design
  HookResult(HookError error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return state_.index() == 0; }
  T& value() & {
    assert(ok());
    return std::get<0>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(state_));
  }
  const HookError& error() const {
    assert(!ok());
    return std::get<1>(state_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, HookError> state_;
};

}  // namespace gpufed::policy
