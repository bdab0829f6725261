#include "connectors/core/action_json.h"

namespace gpufed::connectors {

nlohmann::json ActionToJson(const Action& a) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodeAssignment& n : a.nodes) {
    nlohmann::json j = {{"node", n.node}, {"gpus", n.gpus}};
    if (!n.new_node_name.empty()) j["new_node_name"] = n.new_node_name;
    nodes.push_back(std::move(j));
  }
  return {{"kind", ActionKindName(a.kind)},
          {"key", a.key},
          {"workload", a.workload},
          {"tenant", a.tenant},
          {"attempt", a.attempt},
          {"source", a.source},
          {"nodes", nodes},
          {"gpu_milli_each", a.gpu_milli_each},
          {"gpu_memory_each", a.gpu_memory_each},
          {"mig_profile", a.mig_profile},
          {"cpu_milli", a.cpu_milli},
          {"memory_bytes", a.memory_bytes},
          {"start_delay_ms", a.start_delay.millis()},
          {"provision_pool", a.provision_pool},
          {"duration_ms", a.duration.millis()},
          {"resume_from_ms", a.resume_from.millis()},
          {"checkpoint_interval_ms", a.checkpoint_interval.millis()},
          {"command", a.run.command},
          {"args", a.run.args},
          {"env", a.run.env},
          {"working_dir", a.run.working_dir},
          {"image", a.run.image},
          {"priority_class", a.priority_class},
          {"policy_revision", a.policy_revision},
          {"reason", a.reason}};
}

Result<Action> ActionFromJson(const nlohmann::json& j) {
  try {
    Action a;
    Result<ActionKind> kind = ParseActionKind(j.at("kind").get<std::string>());
    if (!kind.ok()) return kind.status();
    a.kind = *kind;
    a.key = j.at("key").get<std::string>();
    a.workload = j.value("workload", "");
    a.tenant = j.value("tenant", "");
    a.attempt = j.value("attempt", 1);
    a.source = j.value("source", "");
    for (const auto& n : j.value("nodes", nlohmann::json::array())) {
      a.nodes.push_back({n.at("node").get<std::string>(), n.at("gpus").get<std::vector<int>>(),
                         n.value("new_node_name", std::string())});
    }
    a.gpu_milli_each = j.value("gpu_milli_each", 1000);
    a.gpu_memory_each = j.value("gpu_memory_each", int64_t{0});
    a.mig_profile = j.value("mig_profile", "");
    a.priority_class = j.value("priority_class", "");
    a.policy_revision = j.value("policy_revision", "");
    a.cpu_milli = j.value("cpu_milli", int64_t{0});
    a.memory_bytes = j.value("memory_bytes", int64_t{0});
    a.start_delay = Duration::FromMillis(j.value("start_delay_ms", int64_t{0}));
    a.provision_pool = j.value("provision_pool", "");
    a.duration = Duration::FromMillis(j.value("duration_ms", int64_t{0}));
    a.resume_from = Duration::FromMillis(j.value("resume_from_ms", int64_t{0}));
    a.checkpoint_interval = Duration::FromMillis(j.value("checkpoint_interval_ms", int64_t{0}));
    a.run.command = j.value("command", std::vector<std::string>{});
    a.run.args = j.value("args", std::vector<std::string>{});
    a.run.env = j.value("env", std::map<std::string, std::string>{});
    a.run.working_dir = j.value("working_dir", "");
    a.run.image = j.value("image", "");
    a.reason = j.value("reason", "");
    return a;
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("malformed action: ") + e.what());
  }
}

}  // namespace gpufed::connectors
