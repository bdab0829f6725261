// slurmrestd OpenAPI v0.0.38 (Slurm 22.05). Shapes verified against Slurm 22.05.8 on
// Debian 12; testdata/ holds recorded replies.
#include <cctype>

#include "connectors/slurm/api.h"

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t Int(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  if (it->is_number_unsigned()) {
    uint64_t v = it->get<uint64_t>();
    return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
  }
  if (it->is_number_float()) {
    double v = it->get<double>();
    return v > 9e18 || v < -9e18 || v != v ? 0 : static_cast<int64_t>(v);
  }
  return 0;
}

std::vector<std::string> Strings(const json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const json& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

int Clamp(int64_t v) { return v < 0 ? 0 : v > INT32_MAX ? INT32_MAX : static_cast<int>(v); }

Result<const json*> List(const json& reply, const char* key) {
  if (!reply.is_object()) return Unavailable(std::string("malformed reply: not a JSON object (expected ") + key + ")");
  auto it = reply.find(key);
  if (it == reply.end() || !it->is_array()) return Unavailable(std::string("malformed reply: no '") + key + "' list");
  return &*it;
}

class MappingV0038 : public ApiMapping {
 public:
  std::string version() const override { return "v0.0.38"; }
  std::string PingPath() const override { return Prefix() + "/ping"; }
  std::string NodesPath() const override { return Prefix() + "/nodes"; }
  std::string PartitionsPath() const override { return Prefix() + "/partitions"; }
  std::string JobsPath() const override { return Prefix() + "/jobs"; }
  std::string JobPath(int64_t id) const override { return Prefix() + "/job/" + std::to_string(id); }
  std::string SubmitPath() const override { return Prefix() + "/job/submit"; }

  std::vector<SlurmError> ParseErrors(const json& reply) const override {
    std::vector<SlurmError> out;
    if (!reply.is_object()) return out;
    auto it = reply.find("errors");
    if (it == reply.end() || !it->is_array()) return out;
    for (const json& e : *it) {
      if (!e.is_object()) continue;
      SlurmError err;
      // 22.05 uses three names for the number depending on the code path.
      for (const char* k : {"error_number", "error_code", "errno"}) {
        if (e.contains(k)) err.number = static_cast<int>(Int(e, k));
      }
      err.error = Str(e, "error");
      err.description = Str(e, "description");
      out.push_back(std::move(err));
    }
    return out;
  }

  Result<std::vector<SlurmNode>> ParseNodes(const json& reply) const override {
    Result<const json*> list = List(reply, "nodes");
    if (!list.ok()) return list.status();
    std::vector<SlurmNode> out;
    for (const json& n : **list) {
      if (!n.is_object() || Str(n, "name").empty()) continue;
      SlurmNode node;
      node.name = Str(n, "name");
      node.state = Str(n, "state");
      for (char& c : node.state) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      node.state_flags = Strings(n, "state_flags");
      for (std::string& f : node.state_flags) {
        for (char& c : f) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      }
      node.reason = Str(n, "reason");
      node.cpus = Clamp(Int(n, "cpus"));
      node.alloc_cpus = Clamp(Int(n, "alloc_cpus"));
      node.real_memory_mb = std::max<int64_t>(0, Int(n, "real_memory"));
      node.alloc_memory_mb = std::max<int64_t>(0, Int(n, "alloc_memory"));
      node.gres = ParseGres(Str(n, "gres"));
      node.gres_used = ParseGres(Str(n, "gres_used"));
      node.partitions = Strings(n, "partitions");
      out.push_back(std::move(node));
    }
    return out;
  }

  Result<std::vector<SlurmPartition>> ParsePartitions(const json& reply) const override {
    Result<const json*> list = List(reply, "partitions");
    if (!list.ok()) return list.status();
    std::vector<SlurmPartition> out;
    for (const json& p : **list) {
      if (!p.is_object() || Str(p, "name").empty()) continue;
      SlurmPartition part;
      part.name = Str(p, "name");
      part.nodes = Str(p, "nodes");
      part.state = Str(p, "state");
      part.total_nodes = Clamp(Int(p, "total_nodes"));
      for (const std::string& f : Strings(p, "flags")) part.is_default |= f == "default";
      out.push_back(std::move(part));
    }
    return out;
  }

  Result<std::vector<SlurmJob>> ParseJobs(const json& reply) const override {
    Result<const json*> list = List(reply, "jobs");
    if (!list.ok()) return list.status();
    std::vector<SlurmJob> out;
    for (const json& j : **list) {
      if (!j.is_object() || Int(j, "job_id") <= 0) continue;
      SlurmJob job;
      job.job_id = Int(j, "job_id");
      job.name = Str(j, "name");
      job.comment = Str(j, "comment");
      job.state = Str(j, "job_state");
      for (char& c : job.state) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      job.state_reason = Str(j, "state_reason");
      job.exit_code = static_cast<int>(Int(j, "exit_code"));
      job.nodes = Str(j, "nodes");
      job.partition = Str(j, "partition");
      for (const std::string& g : Strings(j, "gres_detail")) {
        for (GresItem& item : ParseGres(g)) job.gres.push_back(std::move(item));
      }
      // "gres:gpu:a100:2" per node; stays when gres_detail is gone (pending, finished).
      std::string per_node = Str(j, "tres_per_node");
      for (size_t at = per_node.find("gres:"); at != std::string::npos; at = per_node.find("gres:")) {
        per_node.erase(at, 5);
      }
      job.gres_per_node = ParseGres(per_node);
      if (job.gres.empty()) {
        int nodes = std::max(1, Clamp(Int(j, "node_count")));
        for (GresItem item : job.gres_per_node) {
          item.count *= nodes;
          job.gres.push_back(std::move(item));
        }
      }
      job.required_nodes = Str(j, "required_nodes");
      job.cpus = Clamp(Int(j, "cpus"));
      job.submit_time = std::max<int64_t>(0, Int(j, "submit_time"));
      job.start_time = std::max<int64_t>(0, Int(j, "start_time"));
      job.end_time = std::max<int64_t>(0, Int(j, "end_time"));
      job.time_limit_minutes = std::max<int64_t>(0, Int(j, "time_limit"));
      job.restart_count = Clamp(Int(j, "restart_cnt"));
      job.standard_output = Str(j, "standard_output");
      out.push_back(std::move(job));
    }
    return out;
  }

  Result<int64_t> ParseSubmit(const json& reply) const override {
    if (!reply.is_object()) return Unavailable("malformed submit reply: not a JSON object");
    int64_t id = Int(reply, "job_id");
    if (id <= 0) return Unavailable("submit reply carries no job_id");
    return id;
  }

  json BuildSubmit(const JobRequest& r) const override {
    json job = json::object();
    job["name"] = r.name;
    if (!r.comment.empty()) job["comment"] = r.comment;
    if (!r.partition.empty()) job["partition"] = r.partition;
    job["current_working_directory"] = r.working_dir.empty() ? "/tmp" : r.working_dir;
    if (!r.standard_output.empty()) job["standard_output"] = r.standard_output;
    job["environment"] = r.environment;  // replaces the job's environment entirely
    if (!r.gres.empty()) job["gres"] = r.gres;
    // "nodelist" is what v0.0.38 accepts for required nodes ("required_nodes" is a
    // disabled key in this version).
    if (!r.nodelist.empty()) job["nodelist"] = r.nodelist;
    if (r.nodes > 1) {
      job["nodes"] = json::array({r.nodes, r.nodes});
      job["tasks"] = r.nodes;
      job["tasks_per_node"] = 1;
    } else {
      job["tasks"] = 1;
    }
    if (r.cpus_per_task > 0) job["cpus_per_task"] = r.cpus_per_task;
    if (r.memory_per_node_mb > 0) job["memory_per_node"] = r.memory_per_node_mb;
    if (r.time_limit_minutes > 0) job["time_limit"] = r.time_limit_minutes;
    // gpufed decides about re-runs (a new attempt with a new key), not Slurm.
    job["requeue"] = false;
    return json{{"job", job}, {"script", r.script}};
  }

 private:
  static std::string Prefix() { return "/slurm/v0.0.38"; }
};

}  // namespace

std::string SlurmError::Text() const {
  std::string text = !description.empty() ? description : !error.empty() ? error : "unspecified error";
  if (!error.empty() && !description.empty() && description.find(error) == std::string::npos) text += " (" + error + ")";
  if (number != 0) text += " [slurm errno " + std::to_string(number) + "]";
  return text;
}

const ApiMapping* FindApiMapping(std::string_view version) {
  static const MappingV0038 kV0038;
  if (version.empty() || version == "v0.0.38" || version == "0.0.38") return &kV0038;
  return nullptr;
}

std::vector<std::string> SupportedApiVersions() { return {"v0.0.38"}; }

}  // namespace gpufed::connectors::slurm
