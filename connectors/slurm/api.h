#pragma once
// The slurmrestd API as the connector needs it: plain structs for nodes, partitions and
// jobs, and one ApiMapping (an adapter) per OpenAPI version that owns its paths, its
// request bodies and the parsing of its replies. The connector only ever sees the structs;
// which adapter is used is negotiated with the server (negotiate.h).
//
//   v0.0.38  Slurm 22.05 (Debian 12)                       api_v0038.cc
//   v0.0.40  Slurm 23.11-25.05 (24.11 on Debian 13)         api_v0040.h/.cc
//   v0.0.41  Slurm 24.05-25.11                              api_v0041.cc
//   v0.0.42  Slurm 24.11-26.05                              api_v0042.cc
//
// Parsers accept any JSON value and never throw. They ignore fields they do not know
// (newer servers add some) and are strict about the ones they need: a missing required
// field, or one of the wrong type, is an Unavailable Status whose message names the
// version, the endpoint and the field ("slurmrestd v0.0.42 GET /slurm/v0.0.42/jobs:
// jobs[3].job_state: missing"); it comes from a misbehaving server or proxy and is worth
// retrying later. Optional fields of the wrong type read as empty.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "connectors/slurm/gres.h"
#include "controller/common/status.h"

namespace gpufed::connectors::slurm {

// One entry of a reply's `errors` array.
struct SlurmError {
  int number = 0;             // Slurm errno (error_number / error_code / errno); 0 when absent
  std::string error;          // "Invalid job id specified"
  std::string description;    // "Unable to find JobId=999"
  std::string Text() const;   // description, else error, with the number
};

// One entry of a reply's `warnings` array (v0.0.40 and later).
struct SlurmWarning {
  std::string description;    // "Ignoring unknown field \"gres\" of type string in ..."
  std::string source;         // "#/job/gres/"
  std::string Text() const;   // "description (at source)"
};

struct SlurmNode {
  std::string name;
  std::string state;                    // base state, lower case: idle, mixed, allocated, down, ...
  std::vector<std::string> state_flags; // upper case: DRAIN, NOT_RESPONDING, ...
  std::string reason;
  int cpus = 0;
  int alloc_cpus = 0;
  int64_t real_memory_mb = 0;
  int64_t alloc_memory_mb = 0;
  std::vector<GresItem> gres;           // configured, in gres.conf order
  std::vector<GresItem> gres_used;
  std::vector<std::string> partitions;
};

struct SlurmPartition {
  std::string name;
  std::string nodes;                    // host list expression, "gpunode[1-4]"
  std::string state;                    // UP, DOWN, DRAIN, INACTIVE
  bool is_default = false;              // v0.0.38 only (later versions do not say)
  int total_nodes = 0;
};

struct SlurmJob {
  int64_t job_id = 0;
  std::string name;
  std::string comment;
  // The Slurm user the job runs as. Anyone may write any comment or name, so only this
  // (with the job id gpufed recorded) says whether gpufed started the job; empty when
  // the reply does not say (such a job is never adopted by its comment).
  std::string user_name;
  // One word, as Slurm 22.05 printed it: a flag that matters more than the base state
  // wins (COMPLETING, CONFIGURING, REQUEUED, ...), else the base state (PENDING,
  // RUNNING, COMPLETED, ...). v0.0.40+ report a list; see base_state and state_flags.
  std::string state;
  std::string base_state;               // PENDING, RUNNING, CANCELLED, ...
  std::vector<std::string> state_flags; // COMPLETING, CONFIGURING, ... (v0.0.40+)
  std::string state_reason;
  int exit_code = 0;                    // raw wait status: 768 = exit 3, 15 = signal 15
  std::string nodes;
  std::string partition;
  std::vector<GresItem> gres;           // GRES held (gres_detail), else requested, all nodes
  std::vector<GresItem> gres_per_node;  // requested per node (tres_per_node)
  std::string required_nodes;           // the job's node pinning ("gpunode1,gpunode2")
  int cpus = 0;
  int64_t submit_time = 0;              // Unix seconds; 0 when not yet
  int64_t start_time = 0;
  int64_t end_time = 0;
  int64_t time_limit_minutes = 0;       // 0 when unknown or unlimited
  int restart_count = 0;
  std::string standard_output;
};

// What to submit. Empty / zero fields are left out of the request.
struct JobRequest {
  std::string name;
  std::string comment;
  std::string partition;
  std::string account;                  // Slurm account to charge; empty: the user's default
  std::string qos;                      // empty: the account's default
  std::string script;
  std::string working_dir;
  std::string standard_output;
  std::map<std::string, std::string> environment;
  std::string gres;                     // per node: "gpu:a100:2" (each adapter spells it its way)
  std::string nodelist;                 // pinning: "gpunode1" or "gpunode1,gpunode2"
  int nodes = 1;
  int cpus_per_task = 0;
  int64_t memory_per_node_mb = 0;
  int64_t time_limit_minutes = 0;
};

// What a submit reply says. A job id of 0 means nothing was submitted, whatever the HTTP
// status: Slurm 24.11 answers 200 without a job id when it could not read the request.
struct SubmitReply {
  int64_t job_id = 0;
  // Every warning is a failure (none is known to be harmless for the bodies gpufed
  // sends): on 24.11 a field it does not know is ignored with only a warning, so a job
  // with a warning may run without its GPUs.
  std::vector<SlurmWarning> warnings;
  std::vector<SlurmError> errors;       // v0.0.38: informational errors of a held job
};

struct PingReply {
  bool controller_up = false;           // "UP"; false also for a token 24.11 rejects
  std::string release;                  // "24.11.5", "22.05.8"; empty when not said
};

class ApiMapping {
 public:
  virtual ~ApiMapping() = default;
  virtual std::string version() const = 0;   // "v0.0.42"
  std::string PingPath() const { return Prefix() + "/ping"; }
  std::string NodesPath() const { return Prefix() + "/nodes"; }
  std::string PartitionsPath() const { return Prefix() + "/partitions"; }
  std::string JobsPath() const { return Prefix() + "/jobs"; }
  std::string JobPath(int64_t job_id) const { return Prefix() + "/job/" + std::to_string(job_id); }
  std::string SubmitPath() const { return Prefix() + "/job/submit"; }

  virtual std::vector<SlurmError> ParseErrors(const nlohmann::json& reply) const = 0;
  virtual std::vector<SlurmWarning> ParseWarnings(const nlohmann::json& reply) const = 0;
  virtual Result<PingReply> ParsePing(const nlohmann::json& reply) const = 0;
  virtual Result<std::vector<SlurmNode>> ParseNodes(const nlohmann::json& reply) const = 0;
  virtual Result<std::vector<SlurmPartition>> ParsePartitions(const nlohmann::json& reply) const = 0;
  // A job list: GET /jobs, or GET /job/{id} (`path` names the endpoint in errors).
  virtual Result<std::vector<SlurmJob>> ParseJobList(const nlohmann::json& reply, const std::string& path) const = 0;
  Result<std::vector<SlurmJob>> ParseJobs(const nlohmann::json& reply) const { return ParseJobList(reply, JobsPath()); }
  // The job id (0 when the reply has none) and what else the reply says; an error only
  // for a reply whose shape is wrong.
  virtual Result<SubmitReply> ParseSubmit(const nlohmann::json& reply) const = 0;
  // The outcome of DELETE /job/{id} answered with HTTP 2xx: OK (cancelled, or already
  // finished), NotFound (unknown job id), or the failure the reply reports.
  virtual Status ParseCancel(const nlohmann::json& reply, int64_t job_id) const = 0;
  // False when the version answers a cancel of an unknown job as a success (v0.0.40,
  // v0.0.41): the client then reads the job back to learn whether it took effect.
  virtual bool CancelReportsFailures() const = 0;
  virtual nlohmann::json BuildSubmit(const JobRequest& request) const = 0;

 protected:
  std::string Prefix() const { return "/slurm/" + version(); }
};

// Turns Slurm's `errors` of a failed reply into a Status:
//   NotFound            2017, an unknown job id
//   Unavailable         no usable answer from slurmctld (errno -1 "Unspecified error",
//                       communication errors 1000-1999 and 5000-5999, timeouts): slurmctld
//                       down, or (22.05 reports both the same way) the token rejected
//   InvalidArgument     Slurm refused the request (unknown partition, node, GRES, limits)
// With no errors: Unavailable for HTTP 5xx, InvalidArgument otherwise.
Status StatusFromSlurmErrors(const std::vector<SlurmError>& errors, int http_status, const std::string& what);

// "auto" (also the empty setting): negotiate the newest version both sides speak.
inline constexpr char kAutoApiVersion[] = "auto";

// The adapter for an exact version ("v0.0.42"); nullptr when unsupported.
const ApiMapping* FindApiMapping(std::string_view version);
// Supported versions, oldest first: v0.0.38, v0.0.40, v0.0.41, v0.0.42.
std::vector<std::string> SupportedApiVersions();
// Valid values of connector.apiVersion: "auto" and the supported versions.
std::vector<std::string> ApiVersionSettings();
// "v0.0.42" -> 42-ish ordering key; -1 for a string that is not "v<major>.<minor>.<patch>".
int64_t ApiVersionOrder(std::string_view version);

}  // namespace gpufed::connectors::slurm
