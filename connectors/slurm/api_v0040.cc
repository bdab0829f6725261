#include "connectors/slurm/api_v0040.h"

#include <algorithm>

#include "connectors/slurm/api_common.h"

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;

int Clamp(int64_t v) { return v < 0 ? 0 : v > INT32_MAX ? INT32_MAX : static_cast<int>(v); }

bool Contains(const std::vector<std::string>& list, const std::string& v) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

// Job flags that Slurm 22.05 printed instead of the base state, most important first
// (slurm_protocol_defs.c, job_state_string), so SlurmJob::state means the same in every
// version: a cancelled job whose processes are still ending reads COMPLETING, as before.
constexpr const char* kJobFlagsFirst[] = {"COMPLETING",   "STAGE_OUT",   "CONFIGURING", "RESIZING",
                                          "REQUEUED",     "REQUEUE_FED", "REQUEUE_HOLD", "SPECIAL_EXIT",
                                          "STOPPED",      "REVOKED",     "RESV_DEL_HOLD", "SIGNALING"};
constexpr const char* kJobBaseStates[] = {"PENDING", "RUNNING",   "SUSPENDED", "COMPLETED", "CANCELLED",     "FAILED",
                                          "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "OUT_OF_MEMORY", "DEADLINE"};
constexpr const char* kNodeBaseStates[] = {"IDLE", "DOWN", "ALLOCATED", "ERROR", "MIXED", "FUTURE", "UNKNOWN"};

void SetJobState(SlurmJob& job, const std::vector<std::string>& list) {
  for (const std::string& s : list) {
    std::string u = Upper(s);
    bool base = std::any_of(std::begin(kJobBaseStates), std::end(kJobBaseStates), [&](const char* b) { return u == b; });
    if (base && job.base_state.empty()) {
      job.base_state = u;
    } else {
      job.state_flags.push_back(u);
    }
  }
  for (const char* flag : kJobFlagsFirst) {
    if (Contains(job.state_flags, flag)) {
      job.state = flag;
      return;
    }
  }
  job.state = !job.base_state.empty() ? job.base_state : job.state_flags.empty() ? "" : job.state_flags[0];
}

// {"status": [...], "return_code": {number}, "signal": {"id": {number}, "name": ...}} as a
// wait status (exit code << 8 | signal); a plain integer is taken as one already.
int ExitCode(Fields& job) {
  if (!job.Has("exit_code")) return 0;
  Fields e = job.Child("exit_code", Need::kOptional);
  int64_t code = e.Number("return_code", Need::kOptional);
  int64_t signal = e.Child("signal", Need::kOptional).Number("id", Need::kOptional);
  if (code == 0 && signal == 0) code = job.Number("exit_code", Need::kOptional);
  return static_cast<int>(((code & 0xff) << 8) | (signal & 0x7f));
}

std::string EnvLine(const std::string& name, const std::string& value) { return name + "=" + value; }

}  // namespace

std::vector<SlurmError> ApiV0040Mapping::ParseErrors(const json& reply) const { return ReadErrors(reply); }
std::vector<SlurmWarning> ApiV0040Mapping::ParseWarnings(const json& reply) const { return ReadWarnings(reply); }

Result<PingReply> ApiV0040Mapping::ParsePing(const json& reply) const {
  ReplyContext ctx(version(), "GET", PingPath());
  GPUFED_RETURN_IF_ERROR(ctx.ExpectObject(reply));
  Fields top(ctx, reply, "");
  const json* pings = top.Array("pings");
  if (pings != nullptr && pings->empty()) top.Fail("pings", "empty");
  PingReply out;
  // "pinged" is "DOWN" both for a stopped slurmctld and for a token slurmctld rejects:
  // 24.11 answers /ping with 200 either way, so a ping proves only that the version is served.
  if (pings != nullptr && !pings->empty()) out.controller_up = top.Element((*pings)[0], 0, "pings").Str("pinged") == "UP";
  out.release = top.Child("meta", Need::kOptional).Child("slurm", Need::kOptional).Str("release", Need::kOptional);
  if (!top.ok()) return top.status();
  return out;
}

Result<std::vector<SlurmNode>> ApiV0040Mapping::ParseNodes(const json& reply) const {
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
    std::vector<std::string> state = n.Strings("state");
    if (n.ok() && state.empty()) n.Fail("state", "empty list");
    for (const std::string& s : state) {
      std::string u = Upper(s);
      bool base = std::any_of(std::begin(kNodeBaseStates), std::end(kNodeBaseStates), [&](const char* b) { return u == b; });
      if (base && node.state.empty()) {
        node.state = Lower(u);
      } else {
        node.state_flags.push_back(u);
      }
    }
    node.reason = n.Str("reason", Need::kOptional);
    node.cpus = Clamp(n.Number("cpus"));
    node.alloc_cpus = Clamp(n.Number("alloc_cpus"));
    node.real_memory_mb = std::max<int64_t>(0, n.Number("real_memory"));
    node.alloc_memory_mb = std::max<int64_t>(0, n.Number("alloc_memory", Need::kOptional));
    node.gres = ParseGres(n.Str("gres"));
    node.gres_used = ParseGres(n.Str("gres_used"));
    node.partitions = n.Strings("partitions");
    out.push_back(std::move(node));
  }
  if (!top.ok()) return top.status();
  return out;
}

Result<std::vector<SlurmPartition>> ApiV0040Mapping::ParsePartitions(const json& reply) const {
  ReplyContext ctx(version(), "GET", PartitionsPath());
  GPUFED_RETURN_IF_ERROR(ctx.ExpectObject(reply));
  Fields top(ctx, reply, "");
  const json* list = top.Array("partitions");
  std::vector<SlurmPartition> out;
  for (size_t i = 0; list != nullptr && i < list->size() && top.ok(); ++i) {
    Fields p = top.Element((*list)[i], i, "partitions");
    SlurmPartition part;
    part.name = p.Str("name");
    Fields nodes = p.Child("nodes", Need::kRequired);
    part.nodes = nodes.Str("configured");
    part.total_nodes = Clamp(nodes.Number("total", Need::kOptional));
    std::vector<std::string> state = p.Child("partition", Need::kRequired).Strings("state");
    // One of UP, DOWN, DRAIN, INACTIVE (a list of one in practice).
    part.state = state.empty() ? "" : Upper(state[0]);
    out.push_back(std::move(part));
  }
  if (!top.ok()) return top.status();
  return out;
}

Result<std::vector<SlurmJob>> ApiV0040Mapping::ParseJobList(const json& reply, const std::string& path) const {
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
    std::vector<std::string> state = j.Strings("job_state");
    if (j.ok() && state.empty()) j.Fail("job_state", "empty list");
    SetJobState(job, state);
    job.state_reason = j.Str("state_reason", Need::kOptional);
    job.exit_code = ExitCode(j);
    job.nodes = j.Str("nodes", Need::kOptional);
    job.partition = j.Str("partition", Need::kOptional);
    // Without slurmdbd, 24.11 puts no GPUs into the TRES strings: what a job asked for is
    // only in tres_per_node, what it holds only in gres_detail (empty once it ended).
    job.gres_per_node = ParseTresPerNode(j.Str("tres_per_node"));
    FillJobGres(job, j.Strings("gres_detail"), Clamp(j.Number("node_count", Need::kOptional)));
    job.required_nodes = j.Str("required_nodes");
    job.cpus = Clamp(j.Number("cpus", Need::kOptional));
    job.submit_time = std::max<int64_t>(0, j.Number("submit_time", Need::kOptional));
    job.start_time = std::max<int64_t>(0, j.Number("start_time", Need::kOptional));
    job.end_time = std::max<int64_t>(0, j.Number("end_time", Need::kOptional));
    job.time_limit_minutes = std::max<int64_t>(0, j.Number("time_limit", Need::kOptional));
    job.restart_count = Clamp(j.Int("restart_cnt", Need::kOptional));
    job.standard_output = j.Str("standard_output", Need::kOptional);
    out.push_back(std::move(job));
  }
  if (!top.ok()) return top.status();
  return out;
}

int64_t ApiV0040Mapping::ReadSubmitJobId(Fields& top) const {
  int64_t id = top.Has("job_id") ? top.Int("job_id") : 0;
  if (top.Has("result")) {
    Fields result = top.Child("result", Need::kOptional);
    int64_t again = result.Has("job_id") ? result.Int("job_id") : 0;
    if (top.ok() && again != 0 && id != 0 && again != id) {
      top.Fail("result.job_id", std::to_string(again) + " differs from job_id " + std::to_string(id));
    }
    if (id == 0) id = again;
  }
  return std::max<int64_t>(0, id);
}

Result<SubmitReply> ApiV0040Mapping::ParseSubmit(const json& reply) const {
  ReplyContext ctx(version(), "POST", SubmitPath());
  GPUFED_RETURN_IF_ERROR(ctx.ExpectObject(reply));
  Fields top(ctx, reply, "");
  SubmitReply out;
  out.job_id = ReadSubmitJobId(top);
  out.warnings = ReadWarnings(reply);
  out.errors = ReadErrors(reply);
  if (!top.ok()) return top.status();
  return out;
}

Status ApiV0040Mapping::ParseCancel(const json& reply, int64_t job_id) const {
  return StatusFromSlurmErrors(ReadErrors(reply), 200, "slurmrestd " + version() + " DELETE " + JobPath(job_id));
}

json ApiV0040Mapping::BuildSubmit(const JobRequest& r) const {
  json job = json::object();
  job["name"] = r.name;
  if (!r.comment.empty()) job["comment"] = r.comment;
  if (!r.partition.empty()) job["partition"] = r.partition;
  if (!r.account.empty()) job["account"] = r.account;
  if (!r.qos.empty()) job["qos"] = r.qos;
  job["current_working_directory"] = r.working_dir.empty() ? "/tmp" : r.working_dir;
  if (!r.standard_output.empty()) job["standard_output"] = r.standard_output;
  json env = json::array();  // replaces the job's environment entirely
  for (const auto& [name, value] : r.environment) env.push_back(EnvLine(name, value));
  job["environment"] = env;
  if (!r.gres.empty()) job["tres_per_node"] = "gres/" + r.gres;
  if (!r.nodelist.empty()) {
    json nodes = json::array();
    size_t start = 0;
    for (size_t i = 0; i <= r.nodelist.size(); ++i) {
      if (i == r.nodelist.size() || r.nodelist[i] == ',') {
        if (i > start) nodes.push_back(r.nodelist.substr(start, i - start));
        start = i + 1;
      }
    }
    job["required_nodes"] = nodes;
  }
  if (r.nodes > 1) {
    job["minimum_nodes"] = r.nodes;
    job["maximum_nodes"] = r.nodes;
    job["tasks"] = r.nodes;
    job["tasks_per_node"] = 1;
  } else {
    job["tasks"] = 1;
  }
  if (r.cpus_per_task > 0) job["cpus_per_task"] = r.cpus_per_task;
  if (r.memory_per_node_mb > 0) job["memory_per_node"] = {{"set", true}, {"number", r.memory_per_node_mb}};
  if (r.time_limit_minutes > 0) job["time_limit"] = {{"set", true}, {"number", r.time_limit_minutes}};
  // gpufed decides about re-runs (a new attempt with a new key), not Slurm.
  job["requeue"] = false;
  job["script"] = r.script;
  return json{{"job", job}};
}

const ApiMapping& ApiV0040() {
  static const ApiV0040Mapping kMapping;
  return kMapping;
}

}  // namespace gpufed::connectors::slurm
