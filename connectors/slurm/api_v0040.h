#pragma once
// slurmrestd OpenAPI v0.0.40 (data_parser/v0.0.40: Slurm 23.11 to 25.05; verified against
// 24.11.5), and the base of v0.0.41 (api_v0041.cc) and v0.0.42 (api_v0042.cc), which
// change only what they override. What differs from v0.0.38 (api_v0038.cc):
//
//   - the script goes inside "job"; the environment is a list of "NAME=value";
//   - GPUs are "tres_per_node": "gres/gpu:a100:2". The v0.0.38 field "gres" is ignored
//     with only a warning, so the job would run without its GPUs;
//   - node pinning is "required_nodes": ["gpunode1"] (a list; a string gives a warning);
//   - many numbers are objects {"set", "infinite", "number"} (time_limit, memory, times,
//     exit codes); v0.0.40 warns on a bare integer, so requests always send objects;
//   - job_state and node state are lists (a base state plus flags);
//   - every reply carries "errors" and "warnings"; a submit that Slurm could not read
//     answers HTTP 200 with a warning and no job id;
//   - a token slurmctld rejects answers HTTP 511 (error 1007), except on /ping;
//   - DELETE /job/{id} of an unknown job answers 200 with no error (v0.0.40, v0.0.41).
#include <string>

#include "connectors/slurm/api.h"
#include "connectors/slurm/api_reader.h"

namespace gpufed::connectors::slurm {

class ApiV0040Mapping : public ApiMapping {
 public:
  std::string version() const override { return "v0.0.40"; }

  std::vector<SlurmError> ParseErrors(const nlohmann::json& reply) const override;
  std::vector<SlurmWarning> ParseWarnings(const nlohmann::json& reply) const override;
  Result<PingReply> ParsePing(const nlohmann::json& reply) const override;
  Result<std::vector<SlurmNode>> ParseNodes(const nlohmann::json& reply) const override;
  Result<std::vector<SlurmPartition>> ParsePartitions(const nlohmann::json& reply) const override;
  Result<std::vector<SlurmJob>> ParseJobList(const nlohmann::json& reply, const std::string& path) const override;
  Result<SubmitReply> ParseSubmit(const nlohmann::json& reply) const override;
  // v0.0.40 answers every cancel with an empty success; failures show only when the job
  // is read back (CancelReportsFailures() is false).
  Status ParseCancel(const nlohmann::json& reply, int64_t job_id) const override;
  bool CancelReportsFailures() const override { return false; }
  nlohmann::json BuildSubmit(const JobRequest& request) const override;

 protected:
  // The submit reply's job id. v0.0.40 and v0.0.41 repeat it in "result"; both must agree.
  virtual int64_t ReadSubmitJobId(Fields& top) const;
};

}  // namespace gpufed::connectors::slurm
