#pragma once
// Something policy code learned about a workload's JSON view: the value at a JSON
// pointer (for an object or array only that it is one; nil when absent), an array's
// length, or a whole subtree (iterated). The Lua runtime records these during hook calls
// (LuaPolicyFile::RecordReads); the placer shares hook results between workloads that
// observe the same at every recorded read (PolicyHooks::RecordWorkloadReads).
#include <compare>
#include <string>

namespace gpufed {

struct ViewRead {
  enum class Kind { kValue, kLength, kWhole };
  std::string pointer;  // RFC 6901; "" is the workload view itself
  Kind kind = Kind::kValue;
  auto operator<=>(const ViewRead&) const = default;
};

}  // namespace gpufed
