#pragma once
// The API's reads of workloads and decisions, scoped to the caller's tenant, over any
// Store. The leader's Controller calls them on its own store (under its lock), and a
// standby replica (issue 38) on a read-only session of the same database, so both answer
// the same request with the same rows, and a tenant sees the same nothing of another
// tenant's workloads through either.
//
// `caller` is the token's tenant ("" for an admin). A tenant caller cannot tell another
// tenant's workload (or tenant) from a missing one: NotFound, never PermissionDenied.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/status.h"
#include "controller/store/records.h"
#include "controller/store/store.h"

namespace gpufed::reconcile {

// Names a workload: `tenant` from the path (/v1/tenants/{tenant}/workloads/{name}), or
// empty on the short paths, meaning the caller's own tenant (for an admin: the one tenant
// that has that name; InvalidArgument when several do).
struct WorkloadRef {
  std::string tenant;
  std::string name;
};

// The decisions one answer lists at most (newest first): the leader's API and a
// standby's give the same page.
inline constexpr int kDecisionsPerAnswer = 200;

// The workload `ref` names, as `caller` may see it.
Result<store::WorkloadRecord> ScopedWorkload(store::Store& store, const WorkloadRef& ref, const std::string& caller);
// `owner` empty: the caller's own workloads (an admin's: everyone's), by submission order.
Result<std::vector<store::WorkloadRecord>> ScopedWorkloads(store::Store& store, const std::string& caller,
                                                           const std::string& owner);
// Every decision for the workload's name in its tenant (each run of a reused name),
// newest first; an empty name lists the caller's decisions (an admin's: every tenant's,
// or the path's tenant's). At most kDecisionsPerAnswer.
Result<std::vector<store::DecisionRow>> ScopedDecisions(store::Store& store, const WorkloadRef& ref,
                                                        const std::string& caller);

// Why the workload `ref` names is where it is, from its newest decision of this run and its
// state transitions (/v1/explain): every part is a row of the store.
Result<nlohmann::json> ScopedExplanation(store::Store& store, const WorkloadRef& ref, const std::string& caller);

}  // namespace gpufed::reconcile
