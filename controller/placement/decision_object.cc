#include "controller/placement/decision_object.h"

namespace gpufed::placement {
namespace {

nlohmann::json Target(const Binding& b, const model::Cluster* cluster) {
  nlohmann::json t = {{"cluster", b.cluster},
                      {"nodes", b.nodes},
                      {"gpus", b.gpus},
                      {"gpuMilliEach", b.gpu_milli_each},
                      {"provisionsNode", b.provisions_node},
                      {"readyAfterMillis", b.ready_after.millis()}};
  if (!b.mig_profile.empty()) t["migProfile"] = b.mig_profile;
  if (b.mig_start >= 0) t["migStart"] = b.mig_start;
  if (cluster != nullptr) {
    t["zone"] = cluster->zone;
    t["region"] = cluster->region;
    t["provider"] = cluster->provider;
  }
  return t;
}

nlohmann::json Victims(const std::vector<Preemption>& preempted) {
  nlohmann::json victims = nlohmann::json::array();
  for (const Preemption& v : preempted) {
    victims.push_back({{"workload", v.workload},
                       {"tenant", v.tenant},
                       {"priority", v.priority},
                       {"cluster", v.cluster},
                       {"nodes", v.nodes},
                       {"checkpointable", v.checkpointable},
                       {"lostWorkMillis", v.lost_work.millis()}});
  }
  return victims;
}

std::string Text(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool Flag(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

}  // namespace

const char* DecisionOutcomeName(const Decision& decision, DecisionKind kind) {
  return kind == DecisionKind::kPreempt ? "preempted" : OutcomeName(decision.outcome);
}

nlohmann::json DecisionObject(const Decision& d, DecisionKind kind, const model::Cluster* cluster) {
  nlohmann::json verdicts = nlohmann::json::array();
  for (const ClusterVerdict& v : d.verdicts) verdicts.push_back(ClusterVerdictToJson(v));
  const bool preempt = kind == DecisionKind::kPreempt;
  nlohmann::json out = {{"decisionVersion", kDecisionObjectVersion},
                        {"workload", d.workload},
                        {"tenant", d.tenant},
                        {"priority", d.priority},
                        {"outcome", DecisionOutcomeName(d, kind)},
                        {"reason", d.reason}};
  out["verdicts"] = std::move(verdicts);  // not through the initializer list, which copies
  const bool placed = !preempt && d.outcome == Outcome::kPlaced;
  if (placed) out["cost"] = d.cost.ToString();
  if (placed || preempt) out["target"] = Target(d.binding, cluster);
  if (!d.verdict_groups.empty()) out["verdictGroups"] = VerdictGroupsToJson(d.verdict_groups);
  if (!d.denied_by.empty()) out["deniedBy"] = d.denied_by;
  if (!d.warnings.empty()) out["warnings"] = d.warnings;
  if (!d.preempted.empty()) out["preempted"] = Victims(d.preempted);
  if (!preempt && !d.exchange_rates.empty()) {
    nlohmann::json rates = nlohmann::json::array();
    for (const model::AppliedRate& r : d.exchange_rates) {
      rates.push_back({{"from", r.from}, {"to", r.to}, {"rate", r.rate}, {"asOf", r.as_of}, {"source", r.source}});
    }
    out["exchangeRates"] = std::move(rates);
  }
  return out;
}

const std::vector<std::string>& DecisionObjectKeys() {
  static const std::vector<std::string> keys = {
      "decisionVersion", "workload", "tenant",        "priority", "outcome",  "reason",    "cost",
      "target",          "verdicts", "verdictGroups", "deniedBy", "warnings", "preempted", "exchangeRates"};
  return keys;
}

Result<StoredDecision> ReadDecisionObject(const nlohmann::json& object) {
  const nlohmann::json& j = object;
  if (!j.is_object()) return InvalidArgument("a stored decision is not a JSON object");
  StoredDecision d;
  auto version = j.find("decisionVersion");
  if (version != j.end()) {
    if (!version->is_number_integer()) return InvalidArgument("decisionVersion is not a whole number");
    d.version = version->get<int>();
    if (d.version > kDecisionObjectVersion) {
      return InvalidArgument("decision object version " + std::to_string(d.version) +
                             " is newer than this gpufed reads (" + std::to_string(kDecisionObjectVersion) + ")");
    }
  }
  const bool v0 = d.version == 0;
  d.outcome = Text(j, "outcome");
  d.reason = Text(j, "reason");
  auto target = j.find(v0 ? "binding" : "target");
  if (target != j.end() && target->is_object()) d.cluster = Text(*target, "cluster");
  auto verdicts = j.find("verdicts");
  if (verdicts != j.end() && verdicts->is_array()) {
    for (const nlohmann::json& v : *verdicts) {
      if (!v.is_object()) continue;
      StoredVerdict s;
      s.cluster = Text(v, "cluster");
      s.eligible = Flag(v, "eligible");
      s.fits_now = Flag(v, v0 ? "fits_now" : "fitsNow");
      s.rule = Text(v, "rule");
      s.reason = Text(v, "reason");
      s.cost = Text(v, "cost");
      auto score = v.find("score");
      if (score != v.end() && score->is_object()) {
        auto total = score->find("total");
        if (total != score->end() && total->is_number()) s.score_total = total->get<double>();
      }
      d.verdicts.push_back(std::move(s));
    }
  }
  return d;
}

}  // namespace gpufed::placement
