#include "controller/reconcile/decision_log.h"

namespace gpufed::reconcile {

nlohmann::json DecisionToJson(const placement::Decision& d, const DecisionContext& ctx) {
  nlohmann::json out = placement::DecisionObject(d, ctx.kind, ctx.cluster);
  out["attempt"] = ctx.attempt;
  out["revision"] = ctx.revision;
  out["decidedAtMillis"] = ctx.at.millis();
  // The store's decisions are what tenants read: another tenant's workload is not named
  // (the journal, for auditors, names it).
  if (!ctx.beneficiary.empty() && ctx.beneficiary_tenant == d.tenant) out["beneficiary"] = ctx.beneficiary;
  return out;
}

store::DecisionRow DecisionRowOf(const placement::Decision& d, const DecisionContext& ctx) {
  store::DecisionRow row;
  row.at = ctx.at;
  row.workload = d.workload;
  row.attempt = ctx.attempt;
  row.revision = ctx.revision;
  row.outcome = placement::DecisionOutcomeName(d, ctx.kind);
  row.cluster = d.binding.cluster;
  row.reason = d.reason;
  row.record_json = DecisionToJson(d, ctx).dump();
  row.tenant = d.tenant;
  row.uid = ctx.uid;
  return row;
}

}  // namespace gpufed::reconcile
