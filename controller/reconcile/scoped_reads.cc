#include "controller/reconcile/scoped_reads.h"

#include <cstdio>
#include <optional>

#include "controller/common/time_text.h"
#include "controller/placement/decision_object.h"

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

Result<nlohmann::json> ScopedExplanation(store::Store& store, const WorkloadRef& ref, const std::string& caller) {
  Result<WorkloadRecord> r = ScopedWorkload(store, ref, caller);
  if (!r.ok()) return r.status();
  nlohmann::json out = {{"workload", r->name},          {"tenant", r->tenant}, {"uid", r->uid},
                        {"state", StateName(r->state)}, {"reason", r->reason}, {"attempt", r->attempt},
                        {"cluster", r->cluster}};
  Result<std::vector<store::DecisionRow>> decisions = store.Decisions(r->tenant, r->name, 20);
  if (!decisions.ok()) return decisions.status();
  std::vector<std::string> lines;
  for (const store::DecisionRow& row : *decisions) {
    if (row.outcome == "preempted" || (!row.uid.empty() && row.uid != r->uid)) continue;  // this run's only
    nlohmann::json object = nlohmann::json::parse(row.record_json, nullptr, false);
    Result<placement::StoredDecision> d = placement::ReadDecisionObject(object);
    if (!d.ok()) continue;
    out["decision"] = std::move(object);
    std::string head = d->outcome == "placed"   ? "placed on " + d->cluster + ": " + d->reason
                       : d->outcome == "queued" ? "pending: " + d->reason
                                                : "rejected: " + d->reason;
    lines.push_back(head);
    for (const placement::StoredVerdict& v : d->verdicts) {
      if (!v.eligible) {
        lines.push_back("not " + v.cluster + ": rule " + (v.rule.empty() ? "?" : v.rule) + ": " + v.reason);
      } else {
        char score[32];
        std::snprintf(score, sizeof score, "%.2f", v.score_total);
        std::string what = v.cluster == d->cluster && d->outcome == "placed" ? "chosen " : "eligible ";
        lines.push_back(what + v.cluster + (v.fits_now ? ": score " + std::string(score) : "") + ", cost " + v.cost +
                        (v.fits_now ? "" : ", no free capacity at decision time"));
      }
    }
    break;
  }
  if (lines.empty()) lines.push_back("no decision yet: " + r->reason);
  out["why"] = lines;
  Result<std::vector<store::Transition>> history = store.History(r->uid);
  if (history.ok()) {
    nlohmann::json h = nlohmann::json::array();
    for (const store::Transition& t : *history) {
      h.push_back({{"attempt", t.attempt},
                   {"from", t.from},
                   {"to", t.to},
                   {"reason", t.reason},
                   {"at", FormatControllerMillis(t.at.millis())}});  // RFC 3339, or +HH:MM:SS in a simulated run
    }
    out["history"] = h;
  }
  return out;
}

}  // namespace gpufed::reconcile
