#include "controller/server/workload_api.h"

#include "controller/common/time_text.h"

namespace gpufed::server {

std::string TenantWorkloadsRoute() { return std::string("/v1/tenants/") + kNamePattern + "/workloads"; }

nlohmann::json WorkloadJson(const store::WorkloadRecord& r) {
  return {{"name", r.name},
          {"uid", r.uid},
          {"tenant", r.tenant},
          {"source", r.source},
          {"state", StateName(r.state)},
          {"reason", r.reason},
          {"attempt", r.attempt},
          {"cluster", r.cluster},
          // Times as people read them (RFC 3339 UTC, or "+HH:MM:SS" in a simulated run);
          // "" for a start or end that has not happened.
          {"submitted", FormatControllerMillis(r.submitted.millis())},
          {"started", r.started.millis() == 0 ? "" : FormatControllerMillis(r.started.millis())},
          {"finished", r.finished.millis() == 0 ? "" : FormatControllerMillis(r.finished.millis())},
          {"progress", r.progress.ToString()},
          {"checkpoint", r.checkpoint.ToString()},
          {"estimate", r.estimate.ToString()},
          {"cost", r.cost.ToString()},
          {"binding", nlohmann::json::parse(r.binding_json, nullptr, false)}};
}

nlohmann::json DecisionsJson(const std::vector<store::DecisionRow>& rows) {
  nlohmann::json items = nlohmann::json::array();
  for (const store::DecisionRow& row : rows) {
    nlohmann::json item = nlohmann::json::parse(row.record_json, nullptr, false);
    if (!item.is_object()) continue;
    item["seq"] = row.seq;
    item["time"] = gpufed::FormatTimeMicros(row.at.millis() * 1000);
    items.push_back(std::move(item));
  }
  return {{"items", std::move(items)}};
}

}  // namespace gpufed::server
