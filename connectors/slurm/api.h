#pragma once
// The slurmrestd API as the connector needs it: plain structs for nodes, partitions and
// jobs, and one ApiMapping per OpenAPI version that knows the paths and the JSON. All
// version-specific JSON lives behind ApiMapping (api_v0038.cc for Slurm 22.05), so
// supporting v0.0.39+ means adding one mapping, not touching the connector.
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
  bool is_default = false;
  int total_nodes = 0;
};

struct SlurmJob {
  int64_t job_id = 0;
  std::string name;
  std::string comment;
  std::string state;                    // upper case: PENDING, RUNNING, COMPLETED, ...
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
  std::string script;
  std::string working_dir;
  std::string standard_output;
  std::map<std::string, std::string> environment;
  std::string gres;                     // per node: "gpu:a100:2"
  std::string nodelist;                 // pinning: "gpunode1" or "gpunode[1-2]"
  int nodes = 1;
  int cpus_per_task = 0;
  int64_t memory_per_node_mb = 0;
  int64_t time_limit_minutes = 0;
};

class ApiMapping {
 public:
  virtual ~ApiMapping() = default;
  virtual std::string version() const = 0;   // "v0.0.38"
  virtual std::string PingPath() const = 0;
  virtual std::string NodesPath() const = 0;
  virtual std::string PartitionsPath() const = 0;
  virtual std::string JobsPath() const = 0;
  virtual std::string JobPath(int64_t job_id) const = 0;
  virtual std::string SubmitPath() const = 0;

  // Parsers accept any JSON value and never throw. A reply whose shape is wrong (not an
  // object, the list missing or of the wrong type) is Unavailable: it comes from a
  // misbehaving server or proxy, and is worth retrying later. Entries that cannot be
  // read are skipped; fields of the wrong type read as empty.
  virtual std::vector<SlurmError> ParseErrors(const nlohmann::json& reply) const = 0;
  virtual Result<std::vector<SlurmNode>> ParseNodes(const nlohmann::json& reply) const = 0;
  virtual Result<std::vector<SlurmPartition>> ParsePartitions(const nlohmann::json& reply) const = 0;
  virtual Result<std::vector<SlurmJob>> ParseJobs(const nlohmann::json& reply) const = 0;
  // The job id of a submit reply; Unavailable when the reply carries none.
  virtual Result<int64_t> ParseSubmit(const nlohmann::json& reply) const = 0;
  virtual nlohmann::json BuildSubmit(const JobRequest& request) const = 0;
};

// The mapping for `version` ("" means the default, v0.0.38); nullptr when unsupported.
const ApiMapping* FindApiMapping(std::string_view version);
std::vector<std::string> SupportedApiVersions();

}  // namespace gpufed::connectors::slurm
