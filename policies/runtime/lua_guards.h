#pragma once
// Internal to policies/runtime: wrappers that make library functions safe to call with
// hostile arguments. The count hook only sees Lua instructions, so C work that can take
// long for a single instruction (pattern backtracking, table.move over a huge range,
// shifting big arrays) is charged to the budget up front. Also: deterministic
// math.random and budget hooks on new coroutines.
#include <cstdint>
#include <string_view>

struct lua_State;

namespace gpufed::policy::internal {

// Steps charged per budget unit for string pattern matching. The step bound below is a
// sound worst case, usually far above the real cost, hence the discount.
inline constexpr double kPatternStepsPerUnit = 64;

// Upper bound on the steps Lua's backtracking matcher can take to search `pattern` in
// `subject`: (start positions) x (product over quantified items of their longest run in
// the subject + 1) x (items + the longest linear scan). `anchor_allowed` is false for
// gmatch, where '^' is a literal. With `plain`, the cost of a substring search.
double PatternStepBound(std::string_view subject, std::string_view pattern, bool anchor_allowed,
                        bool plain);

// Wraps the functions of the libraries stored in the global table at index `globals`
// (before they are made read-only). Raises on memory errors; run it protected.
void InstallGuards(lua_State* L, int globals);

}  // namespace gpufed::policy::internal
