#pragma once
// From a gpufed Submit action to a Slurm batch job, and back from a job to the action
// key it carries. The key travels in the job's comment ("gpufed/v1 key=<uid>.a<n> ...")
// and, readable for people, in its name ("gpufed-<workload>-a<n>"); Observe and the
// duplicate check before a submit both find gpufed's jobs by the comment.
#include <optional>
#include <string>
#include <vector>

#include "connectors/core/connector.h"
#include "connectors/slurm/api.h"

namespace gpufed::connectors::slurm {

// What the comment of a gpufed job says.
struct JobTag {
  std::string key;
  std::string workload;
  std::string tenant;
  int attempt = 0;
};

std::string EncodeJobTag(const JobTag& tag);
// nullopt for a comment that is not gpufed's (other users' jobs share the cluster).
std::optional<JobTag> DecodeJobTag(const std::string& comment);

// Where and on what the job runs, resolved by the connector from the placer's binding.
struct JobPlacement {
  std::vector<std::string> nodes;  // Slurm node names to pin to; empty: Slurm chooses
  std::string gres;                // per node, e.g. "gpu:a100:2" or "gpu:a100_1g.5gb:1"; empty: no GPU
};

// The batch job for a Submit action: script from the run spec (command + args, shell
// quoted), environment (the run spec's plus GPUFED_* variables), output file
// "<working dir>/gpufed-<workload>-a<attempt>-<jobid>.out", time limit from the
// expected duration. InvalidArgument when the run spec has no command (the connector
// runs commands; images need a site wrapper, see README).
Result<JobRequest> BuildJobRequest(const Action& action, const JobPlacement& placement, const std::string& partition);

// Time limit in minutes for a job expected to run `remaining`: the expected time plus
// a quarter (at least five minutes) of slack, rounded up; 0 (no limit) when unknown.
int64_t TimeLimitMinutes(Duration remaining);

// 'it'\''s' style quoting for one shell word.
std::string ShellQuote(const std::string& word);

}  // namespace gpufed::connectors::slurm
