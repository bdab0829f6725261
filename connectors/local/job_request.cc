#include "connectors/local/job_request.h"

#include <cctype>
#include <map>

#include "controller/common/action_key.h"

namespace gpufed::connectors::local {
namespace {

bool IsVariableName(const std::string& name) {
  if (name.empty() || name.size() > 256 || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

Result<std::vector<std::string>> JobEnvironment(const Action& action, const LocalSettings& settings,
                                                const std::string& job_dir) {
  if (action.run.env.size() > kMaxEnvVariables) {
    return InvalidArgument("run.env has " + std::to_string(action.run.env.size()) + " variables; a local job takes " +
                           std::to_string(kMaxEnvVariables) + " at most");
  }
  std::map<std::string, std::string> env = {{"PATH", kJobPath}, {"HOME", settings.user.home}};
  size_t bytes = 0;
  for (const auto& [name, value] : action.run.env) {
    if (!IsVariableName(name)) return InvalidArgument("run.env: \"" + name + "\" is not a variable name");
    if (value.find('\0') != std::string::npos) return InvalidArgument("run.env: " + name + " holds a NUL byte");
    bytes += name.size() + value.size() + 2;
    if (bytes > kMaxEnvBytes) {
      return InvalidArgument("run.env is larger than " + std::to_string(kMaxEnvBytes / 1024) + " KiB");
    }
    env[name] = value;
  }
  std::string gpus;
  for (const NodeAssignment& n : action.nodes) {
    for (int g : n.gpus) gpus += (gpus.empty() ? "" : ",") + std::to_string(g);
  }
  // gpufed's own last: a workload cannot point itself at GPUs it was not given.
  env[settings.gpu_env] = gpus;
  env["GPUFED_GPUS"] = gpus;
  env["GPUFED_JOB_DIR"] = job_dir;
  env["GPUFED_WORKLOAD"] = action.workload;
  env["GPUFED_ATTEMPT"] = std::to_string(action.attempt);
  if (action.leader_epoch > 0) env["GPUFED_LEADER_EPOCH"] = std::to_string(action.leader_epoch);
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) {
    std::string line = name;
    line += '=';
    line += value;
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace gpufed::connectors::local
