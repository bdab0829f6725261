// slurmrestd OpenAPI v0.0.38 (Slurm 22.05 as Debian 12 ships it). Shapes verified against
// Slurm 22.05.8; tests/fixtures/slurm/v0.0.38/ holds recorded replies.
#include <algorithm>

#include "connectors/slurm/api_common.h"
#include "connectors/slurm/api_reader.h"

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;

int Clamp(int64_t v) { return v < 0 ? 0 : v > INT32_MAX ? INT32_MAX : static_cast<int>(v); }

class ApiV0038Mapping : public ApiMapping {
 public:
  std::string version() const override { return "v0.0.38"; }

  std::vector<SlurmError> ParseErrors(const json& reply) const override { return ReadErrors(reply); }
  std::vector<SlurmWarning> ParseWarnings(const json&) const override { return {}; }  // not in v0.0.38

  Result<PingReply> ParsePing(const json& reply) const override {
    ReplyContext ctx(version(), "GET", PingPath());
    GPUFED_RETURN_IF_ERROR(ctx.ExpectObject(reply));
    Fields top(ctx, reply, "");
    const json* pings = top.Array("pings");
    if (pings != nullptr && pings->empty()) top.Fail("pings", "empty");
    PingReply out;
    if (pings != nullptr && !pings->empty()) out.controller_up = top.Element((*pings)[0], 0, "pings").Str("ping") == "UP";
    out.release = top.Child("meta", Need::kOptional).Child("Slurm", Need::kOptional).Str("release", Need::kOptional);
    if (!top.ok()) return top.status();
    return out;
  }

  Result<std::vector<SlurmNode>> ParseNodes(const json& reply) const override {
    ReplyContext ctx(version(), "GET", NodesPath());
    GPUFED_RETURN_IF_ERROR(ctx.ExpectObject(reply));
    Fields top(ctx, reply, "");
    const json* list = top.Array("nodes");
    std::vector<SlurmNode> out;
    for (size_t i = 0; list != nullptr && i < list->size() && top.ok(); ++i) {
      Fields n = top.Element((*list)[i], i, "nodes");
      SlurmNode node;
      node.name = n.Str("name");
      if (n.ok() && node.name.empty()) n.Fail("name", "empty");
      node.state = Lower(n.Str("state"));
      for (std::string& f : n.Strings("state_flags", Need::kOptional)) node.state_flags.push_back(Upper(f));
      node.reason = n.Str("reason", Need::kOptional);
      node.cpus = Clamp(n.Int("cpus"));
      node.alloc_cpus = Clamp(n.Int("alloc_cpus"));
      node.real_memory_mb = std::max<int64_t>(0, n.Int("real_memory"));
      node.alloc_memory_mb = std::max<int64_t>(0, n.Int("alloc_memory", Need::kOptional));
      node.gres = ParseGres(n.Str("gres"));
      node.gres_used = ParseGres(n.Str("gres_used"));
      node.partitions = n.Strings("partitions");
      out.push_back(std::move(node));
    }
    if (!top.ok()) return top.status();
    return out;
  }

  Result<std::vector<SlurmPartition>> ParsePartitions(const json& reply) const override {
    ReplyContext ctx(version(), "GET", PartitionsPath());
    GPUFED_RETURN_IF_ERROR(ctx.ExpectObject(reply));
    Fields top(ctx, reply, "");
    const json* list = top.Array("partitions");
    std::vector<SlurmPartition> out;
    for (size_t i = 0; list != nullptr && i < list->size() && top.ok(); ++i) {
      Fields p = top.Element((*list)[i], i, "partitions");
      SlurmPartition part;
      part.name = p.Str("name");
      part.nodes = p.Str("nodes");
      part.state = Upper(p.Str("state"));
      part.total_nodes = Clamp(p.Int("total_nodes", Need::kOptional));
      for (const std::string& f : p.Strings("flags", Need::kOptional)) part.is_default |= f == "default";
      out.push_back(std::move(part));
    }
    if (!top.ok()) return top.status();
    return out;
  }

  Result<std::vector<SlurmJob>> ParseJobList(const json& reply, const std::string& path) const override {
    ReplyContext ctx(version(), "GET", path);
    GPUFED_RETURN_IF_ERROR(ctx.ExpectObject(reply));
    Fields top(ctx, reply, "");
    const json* list = top.Array("jobs");
    std::vector<SlurmJob> out;
    for (size_t i = 0; list != nullptr && i < list->size() && top.ok(); ++i) {
      Fields j = top.Element((*list)[i], i, "jobs");
      SlurmJob job;
      job.job_id = j.Int("job_id");
      if (j.ok() && job.job_id <= 0) j.Fail("job_id", "not a job id: " + std::to_string(job.job_id));
      job.name = j.Str("name");
      job.comment = j.Str("comment");  // gpufed finds its jobs by it: never guess
      job.user_name = j.Str("user_name", Need::kOptional);  // absent: never adopted by comment
      job.state = Upper(j.Str("job_state"));
      if (j.ok() && job.state.empty()) j.Fail("job_state", "empty");
      job.base_state = job.state;
      job.state_reason = j.Str("state_reason", Need::kOptional);
      job.exit_code = static_cast<int>(j.Int("exit_code", Need::kOptional));
      job.nodes = j.Str("nodes", Need::kOptional);
      job.partition = j.Str("partition", Need::kOptional);
      // "gres:gpu:a100:2" per node; stays when gres_detail is gone (pending, finished),
      // so pending jobs' GPUs can be counted as taken.
      job.gres_per_node = ParseTresPerNode(j.Str("tres_per_node"));
      FillJobGres(job, j.Strings("gres_detail"), Clamp(j.Int("node_count", Need::kOptional)));
      job.required_nodes = j.Str("required_nodes", Need::kOptional);
      job.cpus = Clamp(j.Int("cpus", Need::kOptional));
      job.submit_time = std::max<int64_t>(0, j.Int("submit_time", Need::kOptional));
      job.start_time = std::max<int64_t>(0, j.Int("start_time", Need::kOptional));
      job.end_time = std::max<int64_t>(0, j.Int("end_time", Need::kOptional));
      job.time_limit_minutes = std::max<int64_t>(0, j.Int("time_limit", Need::kOptional));
      job.restart_count = Clamp(j.Int("restart_cnt", Need::kOptional));
      job.standard_output = j.Str("standard_output", Need::kOptional);
      out.push_back(std::move(job));
    }
    if (!top.ok()) return top.status();
    return out;
  }

  Result<SubmitReply> ParseSubmit(const json& reply) const override {
    ReplyContext ctx(version(), "POST", SubmitPath());
    GPUFED_RETURN_IF_ERROR(ctx.ExpectObject(reply));
    Fields top(ctx, reply, "");
    SubmitReply out;
    if (top.Has("job_id")) out.job_id = std::max<int64_t>(0, top.Int("job_id"));
    out.errors = ReadErrors(reply);
    if (!top.ok()) return top.status();
    return out;
  }

  Status ParseCancel(const json& reply, int64_t job_id) const override {
    // 22.05 answers failures with HTTP 500 (the client maps those); a 2xx is a success.
    return StatusFromSlurmErrors(ReadErrors(reply), 200, "slurmrestd " + version() + " DELETE " + JobPath(job_id));
  }
  bool CancelReportsFailures() const override { return true; }

  json BuildSubmit(const JobRequest& r) const override {
    json job = json::object();
    job["name"] = r.name;
    if (!r.comment.empty()) job["comment"] = r.comment;
    if (!r.partition.empty()) job["partition"] = r.partition;
    if (!r.account.empty()) job["account"] = r.account;
    if (!r.qos.empty()) job["qos"] = r.qos;
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
};

}  // namespace

const ApiMapping& ApiV0038() {
  static const ApiV0038Mapping kMapping;
  return kMapping;
}

}  // namespace gpufed::connectors::slurm
