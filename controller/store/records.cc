#include "controller/store/records.h"

#include <array>

namespace gpufed::store {
namespace {
constexpr std::array<const char*, 10> kNames = {"Pending",   "Queued",    "Placed",   "Running",  "Succeeded",
                                                "Failed",    "Preempted", "Requeued", "Rejected", "Cancelled"};
}  // namespace

const char* StateName(WorkloadState state) { return kNames[static_cast<size_t>(state)]; }

Result<WorkloadState> ParseState(const std::string& name) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (name == kNames[i]) return static_cast<WorkloadState>(i);
  }
  return InvalidArgument("unknown workload state " + name);
}

bool IsTerminal(WorkloadState s) {
  return s == WorkloadState::kSucceeded || s == WorkloadState::kFailed || s == WorkloadState::kRejected ||
         s == WorkloadState::kCancelled;
}

bool IsWaiting(WorkloadState s) {
  return s == WorkloadState::kPending || s == WorkloadState::kQueued || s == WorkloadState::kRequeued;
}

bool IsActive(WorkloadState s) { return s == WorkloadState::kPlaced || s == WorkloadState::kRunning; }

}  // namespace gpufed::store
