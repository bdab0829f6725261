#include "controller/reconcile/decision_log.h"

namespace gpufed::reconcile {

nlohmann::json DecisionToJson(const placement::Decision& d, const DecisionContext& ctx) {
  nlohmann::json verdicts = nlohmann::json::array();
  for (const placement::ClusterVerdict& v : d.verdicts) {
    nlohmann::json j = nlohmann::json::object();  // emplaced: see placement::ScoreToJson
    nlohmann::json::object_t& o = j.get_ref<nlohmann::json::object_t&>();
    o.emplace("cluster", v.cluster);
    o.emplace("eligible", v.eligible);
    o.emplace("fits_now", v.fits_now);
    if (!v.rule.empty()) j["rule"] = v.rule;
    if (!v.reason.empty()) j["reason"] = v.reason;
    if (v.eligible) {
      j["score"] = placement::ScoreToJson(v.score);
      j["cost"] = v.cost.ToString();
    }
    if (!v.warnings.empty()) j["warnings"] = v.warnings;
    verdicts.push_back(std::move(j));
  }
  nlohmann::json out = {{"kind", ctx.kind},
                        {"workload", d.workload},
                        {"tenant", d.tenant},
                        {"priority", d.priority},
                        {"attempt", ctx.attempt},
                        {"revision", ctx.revision},
                        {"at_ms", ctx.at.millis()},
                        {"outcome", ctx.kind == "preempt" ? "preempted" : placement::OutcomeName(d.outcome)},
                        {"reason", d.reason},
                        {"cost", d.cost.ToString()}};
  out["verdicts"] = std::move(verdicts);  // not through the initializer list, which copies
  if (!d.verdict_groups.empty()) out["verdict_groups"] = placement::VerdictGroupsToJson(d.verdict_groups);
  if (!d.denied_by.empty()) out["denied_by"] = d.denied_by;
  if (!d.warnings.empty()) out["warnings"] = d.warnings;
  // The store's decisions are what tenants read: another tenant's workload is not named
  // (the journal, for auditors, names it).
  if (!ctx.beneficiary.empty() && ctx.beneficiary_tenant == d.tenant) out["beneficiary"] = ctx.beneficiary;
  if (d.outcome == placement::Outcome::kPlaced || ctx.kind == "preempt") {
    out["binding"] = {{"cluster", d.binding.cluster},
                      {"nodes", d.binding.nodes},
                      {"gpus", d.binding.gpus},
                      {"gpu_milli_each", d.binding.gpu_milli_each},
                      {"mig_profile", d.binding.mig_profile},
                      {"provisions_node", d.binding.provisions_node},
                      {"ready_after_ms", d.binding.ready_after.millis()}};
  }
  return out;
}

Status StoreDecisionLog::Record(const placement::Decision& d, const DecisionContext& ctx) {
  store::DecisionRow row;
  row.at = ctx.at;
  row.workload = d.workload;
  row.attempt = ctx.attempt;
  row.revision = ctx.revision;
  row.outcome = ctx.kind == "preempt" ? "preempted" : placement::OutcomeName(d.outcome);
  row.cluster = d.binding.cluster;
  row.reason = d.reason;
  row.record_json = DecisionToJson(d, ctx).dump();
  row.tenant = d.tenant;
  row.uid = ctx.uid;
  // The journal (appended first, by TeeDecisionLog) is the durable copy; the store's row,
  // which the API reads, commits with the loop's next store write.
  store_->RecordDecisionLater(row);
  return Status::Ok();
}

}  // namespace gpufed::reconcile
