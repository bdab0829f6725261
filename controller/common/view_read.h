#pragma once
// Something policy code learned about a workload's JSON view: the value at a JSON
// pointer (for an object or array only that it is one; nil when absent), an array's
// length, or a whole subtree (iterated); or that the hook asked for the time (`now()`),
// which is the same for every workload of one plan but not from one plan to the next. The Lua runtime records these during hook calls
// (LuaPolicyFile::RecordReads); the placer shares hook results between workloads that
// observe the same at every recorded read (PolicyHooks::RecordWorkloadReads).
#include <compare>
#include <string>

namespace gpufed {

struct ViewRead {
  enum class Kind { kValue, kLength, kWhole, kNow };
  std::string pointer;  // RFC 6901; "" is the workload view itself (and for kNow)
  Kind kind = Kind::kValue;
  auto operator<=>(const ViewRead&) const = default;
};

}  // namespace gpufed
