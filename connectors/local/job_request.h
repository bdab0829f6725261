#pragma once
// What a Submit asks of the local connector, checked and turned into what the job gets:
// its environment (nothing of the controller's own) and whether the cluster takes it.
#include <string>
#include <vector>

#include "connectors/core/connector.h"
#include "connectors/local/local_settings.h"
#include "controller/common/status.h"

namespace gpufed::connectors::local {

// The PATH a job gets unless its run.env sets one.
inline constexpr const char* kJobPath = "/usr/local/bin:/usr/bin:/bin";

// Bounds on run.env: a job's environment is built in the controller's memory.
inline constexpr size_t kMaxEnvVariables = 512;
inline constexpr size_t kMaxEnvBytes = 256 * 1024;

// The job's whole environment, "NAME=value" sorted by name: PATH (kJobPath) and HOME
// (the job user's), then the workload's run.env (which may replace those two), then
// gpufed's own, which nothing replaces: GPUFED_JOB_DIR, GPUFED_GPUS, GPUFED_WORKLOAD,
// GPUFED_ATTEMPT and the GPU variable (settings.gpu_env). InvalidArgument for a run.env
// name that is not a variable name, a value with a NUL byte, or more than the bounds.
Result<std::vector<std::string>> JobEnvironment(const Action& action, const LocalSettings& settings,
                                                const std::string& job_dir);


}  // namespace gpufed::connectors::local
