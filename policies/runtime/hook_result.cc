#include "policies/runtime/hook_result.h"

namespace gpufed::policy {

const char* HookErrorKindName(HookErrorKind kind) {
  switch (kind) {
    case HookErrorKind::kLoad:
      return "load";
    case HookErrorKind::kRuntime:
      return "runtime";
    case HookErrorKind::kBudget:
      return "budget";
    case HookErrorKind::kDeadline:
      return "deadline";
    case HookErrorKind::kMemory:
      return "memory";
    case HookErrorKind::kDepth:
      return "depth";
    case HookErrorKind::kBadReturn:
      return "bad-return";
    case HookErrorKind::kNotDefined:
      return "not-defined";
  }
  return "unknown";
}

std::string HookError::ToString() const {
  // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  std::string out;
  out.reserve(policy.size() + file.size() + message.size() + 24);
  out.append("policy '").append(policy).append("' (").append(file);
  if (line > 0) out.append(":").append(std::to_string(line));
  out.append("): ").append(message);
  return out;
}

Status HookError::ToStatus() const {
  switch (kind) {
    case HookErrorKind::kLoad:
      return InvalidArgument(ToString());
    case HookErrorKind::kBudget:
    case HookErrorKind::kDeadline:
    case HookErrorKind::kMemory:
    case HookErrorKind::kDepth:
      return ResourceExhausted(ToString());
    default:
      return FailedPrecondition(ToString());
  }
}

}  // namespace gpufed::policy
