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
