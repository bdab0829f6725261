#include "connectors/slurm/negotiate.h"

#include <algorithm>
#include <set>

namespace gpufed::connectors::slurm {

std::vector<std::string> VersionsInOpenApi(const nlohmann::json& document) {
  std::vector<std::string> out;
  if (!document.is_object()) return out;
  auto paths = document.find("paths");
  if (paths == document.end() || !paths->is_object()) return out;
  std::set<std::string> seen;
  for (const auto& [path, _] : paths->items()) {
    constexpr std::string_view kPrefix = "/slurm/";
    if (path.rfind(kPrefix, 0) != 0) continue;
    size_t end = path.find('/', kPrefix.size());
    std::string version = path.substr(kPrefix.size(), end == std::string::npos ? std::string::npos : end - kPrefix.size());
    if (ApiVersionOrder(version) >= 0 && seen.insert(version).second) out.push_back(version);
  }
  std::sort(out.begin(), out.end(),
            [](const std::string& a, const std::string& b) { return ApiVersionOrder(a) < ApiVersionOrder(b); });
  return out;
}

std::string JoinVersions(const std::vector<std::string>& versions) {
  std::string out;
  for (const std::string& v : versions) out += (out.empty() ? "" : ", ") + v;
  return out.empty() ? "none" : out;
}

Result<const ApiMapping*> ChooseApi(std::string_view setting, const std::vector<std::string>& offered,
                                    const std::string& endpoint) {
  std::string offer = "slurmrestd at " + endpoint + " offers " + JoinVersions(offered);
  if (setting.empty() || setting == kAutoApiVersion) {
    const ApiMapping* best = nullptr;
    for (const std::string& v : offered) {
      const ApiMapping* m = FindApiMapping(v);
      if (m != nullptr && (best == nullptr || ApiVersionOrder(v) > ApiVersionOrder(best->version()))) best = m;
    }
    if (best == nullptr) {
      return FailedPrecondition(offer + "; gpufed speaks " + JoinVersions(SupportedApiVersions()) +
                                " (connector.apiVersion: auto found none in common)");
    }
    return best;
  }
  const ApiMapping* pinned = FindApiMapping(setting);
  if (pinned == nullptr) {
    return InvalidArgument("connector.apiVersion " + std::string(setting) + " is not supported (use auto or one of " +
                           JoinVersions(SupportedApiVersions()) + ")");
  }
  if (std::find(offered.begin(), offered.end(), pinned->version()) == offered.end()) {
    return FailedPrecondition("connector.apiVersion " + pinned->version() + " is pinned, but " + offer +
                              " (use apiVersion: auto, or one of those)");
  }
  return pinned;
}

}  // namespace gpufed::connectors::slurm
