#include "controller/placement/plan.h"

#include "controller/placement/placer.h"

namespace gpufed::placement {

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPlaced: return "placed";
    case Outcome::kQueued: return "queued";
    case Outcome::kRejected: return "rejected";
  }
  return "queued";
}

Plan MakePlan(const Snapshot& snapshot) { return Placer(snapshot).Run(); }

nlohmann::json ScoreToJson(const ScoreBreakdown& s) {
  return {{"cost", s.cost},     {"locality", s.locality}, {"fragmentation", s.fragmentation},
          {"onprem", s.onprem}, {"lua", s.lua},           {"total", s.total}};
}

nlohmann::json ClusterVerdictToJson(const ClusterVerdict& v) {
  nlohmann::json j = {{"cluster", v.cluster}, {"eligible", v.eligible}, {"fitsNow", v.fits_now}};
  if (!v.rule.empty()) j["rule"] = v.rule;
  if (!v.reason.empty()) j["reason"] = v.reason;
  if (v.eligible) j["cost"] = v.cost.ToString();
  if (v.fits_now) j["score"] = ScoreToJson(v.score);
  if (!v.warnings.empty()) j["warnings"] = v.warnings;
  return j;
}

nlohmann::json VerdictGroupsToJson(const std::vector<VerdictGroup>& groups) {
  nlohmann::json out = nlohmann::json::array();
  for (const VerdictGroup& g : groups) {
    nlohmann::json j = {{"reason", g.reason}, {"clusters", g.clusters}, {"examples", g.examples}};
    if (!g.rule.empty()) j["rule"] = g.rule;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace gpufed::placement
