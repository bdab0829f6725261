#pragma once
// From a gpufed Submit action to a Slurm batch job, and back from a job to the action
// key it carries. The key travels in the job's comment ("gpufed/v1 key=<uid>.a<n> ...")
// and, readable for people, in its name ("gpufed-<workload>-a<n>"). Neither proves the
// job is gpufed's (any Slurm user can write both): the connector adopts a job by the id
// it recorded, and by name and comment only when the job also runs as gpufed's own
// Slurm user (slurm_connector.h).
#include <optional>
#include <string>
#include <vector>

#include "connectors/core/connector.h"
#include "connectors/slurm/api.h"
#include "connectors/slurm/site_settings.h"

namespace gpufed::connectors::slurm {

// What the comment of a gpufed job says.
struct JobTag {
  std::string key;
  std::string workload;
  std::string tenant;
  int attempt = 0;
  int64_t leader_epoch = 0;  // 0: not written (one controller alone)
};

std::string EncodeJobTag(const JobTag& tag);
// nullopt for a comment that is not gpufed's (other users' jobs share the cluster).
std::optional<JobTag> DecodeJobTag(const std::string& comment);

// Where and on what the job runs, resolved by the connector from the placer's binding.
struct JobPlacement {
  std::vector<std::string> nodes;  // Slurm node names to pin to; empty: Slurm chooses
  std::string gres;                // per node, e.g. "gpu:a100:2" or "gpu:a100_1g.5gb:1"; empty: no GPU
};

// "gpufed-<workload>-a<attempt>": the name of the attempt's job.
std::string JobNameFor(const std::string& workload, int attempt);

// Where the site wants the job: its partition, the Slurm account (and QOS) of the
// action's tenant, and the working directory used when the run spec names none.
struct JobSite {
  std::string partition;       // empty: Slurm's default partition
  SlurmAccount account;        // empty: the Slurm user's default account
  std::string work_dir;        // absolute; see DefaultWorkDir
};

// The working directory when neither the workload (run.workingDir) nor the site
// (slurm.gpufed.io/work-dir) names one: the Slurm user's home by the usual convention,
// /root for root and /home/<user> for anyone else. Never /tmp: anyone may create files
// there, and output names are predictable.
std::string DefaultWorkDir(const std::string& slurm_user);

// The batch job for a Submit action: script from the run spec (command + args, shell
// quoted), environment (the run spec's plus GPUFED_* variables), output file
// "<working dir>/gpufed-<workload>-a<attempt>-<jobid>.out" (the working dir is
// run.workingDir, else site.work_dir), account and QOS from the site, time limit from the
// expected duration. InvalidArgument when the run spec has no command (the connector
// runs commands; images need a site wrapper, see README) or no working dir is known.
Result<JobRequest> BuildJobRequest(const Action& action, const JobPlacement& placement, const JobSite& site);

// Time limit in minutes for a job expected to run `remaining`: the expected time plus
// a quarter (at least five minutes) of slack, rounded up; 0 (no limit) when unknown.
int64_t TimeLimitMinutes(Duration remaining);

// 'it'\''s' style quoting for one shell word.
std::string ShellQuote(const std::string& word);

}  // namespace gpufed::connectors::slurm
