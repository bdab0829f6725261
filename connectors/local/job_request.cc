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

bool AllOf(std::string_view text, int (*is)(int)) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!is(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

int IsLowerHex(int c) { return std::isdigit(c) || (c >= 'a' && c <= 'f'); }

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
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

bool IsNonApiSubmission(const std::string& key) {
  std::optional<ParsedActionKey> parsed = ParseActionKey(key);
  if (!parsed) return false;
  const size_t dash = parsed->uid.rfind('-');
  if (dash == std::string::npos || dash == 0) return false;
  const std::string_view suffix = std::string_view(parsed->uid).substr(dash + 1);
  const bool repository_commit = suffix.size() == 8 && AllOf(suffix, IsLowerHex);
  const bool repository_digest = suffix.size() == 8 && suffix.substr(0, 7) == "sha256:" && IsLowerHex(suffix[7]);
  const bool scenario = suffix.size() > 1 && suffix[0] == 's' && AllOf(suffix.substr(1), ::isdigit);
  return repository_commit || repository_digest || scenario;
}

}  // namespace gpufed::connectors::local
