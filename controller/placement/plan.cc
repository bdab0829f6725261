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

nlohmann::json BindingToJson(const Binding& b) {
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t m = 0; m < b.nodes.size(); ++m) {
    nodes.push_back({{"node", b.nodes[m]}, {"gpus", m < b.gpus.size() ? b.gpus[m] : std::vector<int>{}}});
  }
  nlohmann::json j = {{"cluster", b.cluster}, {"nodes", std::move(nodes)}, {"gpu_milli_each", b.gpu_milli_each}};
  if (!b.pool.empty()) j["pool"] = b.pool;
  if (!b.mig_profile.empty()) j["mig_profile"] = b.mig_profile;
  if (b.mig_start >= 0) j["mig_start"] = b.mig_start;
  if (b.provisions_node) j["provisions_node"] = true;
  if (b.ready_after.millis() != 0) j["ready_after_ms"] = b.ready_after.millis();
  return j;
}

Binding BindingFromJson(const nlohmann::json& j) {
  Binding b;
  if (!j.is_object()) return b;
  auto text = [&](const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto integer = [&](const char* key, int64_t fallback) {
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
  };
  b.cluster = text("cluster");
  b.pool = text("pool");
  b.mig_profile = text("mig_profile");
  b.gpu_milli_each = static_cast<int>(integer("gpu_milli_each", 1000));
  b.mig_start = static_cast<int>(integer("mig_start", -1));
  b.ready_after = Duration::FromMillis(integer("ready_after_ms", 0));
  auto prov = j.find("provisions_node");
  b.provisions_node = prov != j.end() && prov->is_boolean() && prov->get<bool>();
  auto nodes = j.find("nodes");
  if (nodes == j.end() || !nodes->is_array()) return b;
  for (const nlohmann::json& m : *nodes) {
    if (!m.is_object() || !m.contains("node") || !m["node"].is_string()) continue;
    b.nodes.push_back(m["node"].get<std::string>());
    std::vector<int> gpus;
    if (m.contains("gpus") && m["gpus"].is_array()) {
      for (const nlohmann::json& g : m["gpus"]) {
        if (g.is_number_integer()) gpus.push_back(g.get<int>());
      }
    }
    b.gpus.push_back(std::move(gpus));
  }
  return b;
}

// These run for every verdict of every decision the loop journals and stores: members are
// emplaced into the object's map, since nlohmann's initializer lists copy each value once
// more. The output is the same (objects are ordered by key either way).
nlohmann::json ScoreToJson(const ScoreBreakdown& s) {
  nlohmann::json j = nlohmann::json::object();
  nlohmann::json::object_t& o = j.get_ref<nlohmann::json::object_t&>();
  o.emplace("cost", s.cost);
  o.emplace("locality", s.locality);
  o.emplace("fragmentation", s.fragmentation);
  o.emplace("onprem", s.onprem);
  o.emplace("lua", s.lua);
  o.emplace("total", s.total);
  return j;
}

nlohmann::json ClusterVerdictToJson(const ClusterVerdict& v) {
  nlohmann::json j = nlohmann::json::object();
  nlohmann::json::object_t& o = j.get_ref<nlohmann::json::object_t&>();
  o.emplace("cluster", v.cluster);
  o.emplace("eligible", v.eligible);
  o.emplace("fitsNow", v.fits_now);
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
    nlohmann::json j = nlohmann::json::object();
    nlohmann::json::object_t& o = j.get_ref<nlohmann::json::object_t&>();
    o.emplace("reason", g.reason);
    o.emplace("clusters", g.clusters);
    o.emplace("examples", g.examples);
    if (!g.rule.empty()) o.emplace("rule", g.rule);
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace gpufed::placement
