#include "controller/reconcile/scoped_reads.h"

#include <optional>

namespace gpufed::reconcile {

using store::WorkloadRecord;

Result<WorkloadRecord> ScopedWorkload(store::Store& store, const WorkloadRef& ref, const std::string& caller) {
  const Status missing = NotFound("no workload " + ref.name);
  if (!caller.empty()) {
    // A tenant names only its own workloads; another tenant's path looks empty.
    if (!ref.tenant.empty() && ref.tenant != caller) return missing;
    Result<std::optional<WorkloadRecord>> r = store.Get(caller, ref.name);
    if (!r.ok()) return r.status();
    if (!*r) return missing;
    return **r;
  }
  if (!ref.tenant.empty()) {
    Result<std::optional<WorkloadRecord>> r = store.Get(ref.tenant, ref.name);
    if (!r.ok()) return r.status();
    if (!*r) return NotFound("no workload " + ref.name + " in tenant " + ref.tenant);
    return **r;
  }
  Result<std::vector<WorkloadRecord>> found = store.FindByName(ref.name);
  if (!found.ok()) return found.status();
  if (found->empty()) return missing;
  if (found->size() > 1) {
    std::string tenants;
    for (const WorkloadRecord& r : *found) tenants += (tenants.empty() ? "" : ", ") + r.tenant;
    return InvalidArgument("workload " + ref.name + " exists in tenants " + tenants +
                           "; name one: /v1/tenants/TENANT/workloads/" + ref.name);
  }
  return found->front();
}

Result<std::vector<WorkloadRecord>> ScopedWorkloads(store::Store& store, const std::string& caller,
                                                    const std::string& owner) {
  if (!caller.empty() && !owner.empty() && owner != caller) return NotFound("no tenant " + owner);
  return store.List(caller.empty() ? owner : caller);
}

Result<std::vector<store::DecisionRow>> ScopedDecisions(store::Store& store, const WorkloadRef& ref,
                                                        const std::string& caller) {
  if (ref.name.empty()) {
    // A tenant lists its own decisions; an admin every tenant's (or the path's tenant's).
    if (!caller.empty() && !ref.tenant.empty() && ref.tenant != caller) return NotFound("no tenant " + ref.tenant);
    return store.Decisions(caller.empty() ? ref.tenant : caller, "", kDecisionsPerAnswer);
  }
  Result<WorkloadRecord> r = ScopedWorkload(store, ref, caller);
  if (!r.ok()) return r.status();
  return store.Decisions(r->tenant, r->name, kDecisionsPerAnswer);
}

}  // namespace gpufed::reconcile
