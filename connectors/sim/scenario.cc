#include "connectors/sim/scenario.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gpufed::connectors::sim {
namespace {

Status ErrorAt(const std::string& file, const YAML::Node& node, const std::string& field, const std::string& msg) {
  const YAML::Mark mark = node.Mark();
  return InvalidArgument(file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) +
                         ": " + field + ": " + msg);
}

Result<Duration> DurationField(const std::string& file, const YAML::Node& parent, const std::string& key,
                               const std::string& path) {
  YAML::Node n = parent[key];
  if (!n) return ErrorAt(file, parent, path + "." + key, "required");
  if (!n.IsScalar()) return ErrorAt(file, n, path + "." + key, "expected a duration such as 90m");
  Result<Duration> d = Duration::Parse(n.Scalar());
  if (!d.ok()) return ErrorAt(file, n, path + "." + key, d.status().message());
  return d;
}

}  // namespace

std::vector<Failure> Scenario::FailuresOf(const std::string& cluster) const {
  std::vector<Failure> out;
  for (const Failure& f : failures) {
    if (f.cluster == cluster) out.push_back(f);
  }
  return out;
}

Result<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": cannot read scenario");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ParseScenario(ss.str(), path, std::filesystem::path(path).parent_path().string());
}

Result<Scenario> ParseScenario(const std::string& text, const std::string& file, const std::string& base_dir) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(file + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                           ": " + e.msg);
  }
  Scenario out;
  if (!root || root.IsNull()) return out;
  if (!root.IsMap()) return ErrorAt(file, root, "(document)", "expected a mapping");
  for (const auto& kv : root) {
    std::string key = kv.first.Scalar();
    if (key != "submissions" && key != "failures") {
      return ErrorAt(file, kv.first, key, "unknown field (expected submissions, failures)");
    }
  }
  if (YAML::Node subs = root["submissions"]) {
    if (!subs.IsSequence()) return ErrorAt(file, subs, "submissions", "expected a list of Workload files");
    for (const YAML::Node& s : subs) {
      if (!s.IsScalar()) return ErrorAt(file, s, "submissions", "expected a file path");
      std::filesystem::path p(s.Scalar());
      out.submissions.push_back(p.is_absolute() || base_dir.empty() ? p.string() : (std::filesystem::path(base_dir) / p).string());
    }
  }
  if (YAML::Node fails = root["failures"]) {
    if (!fails.IsSequence()) return ErrorAt(file, fails, "failures", "expected a list");
    for (size_t i = 0; i < fails.size(); ++i) {
      const YAML::Node f = fails[i];
      std::string path = "failures[" + std::to_string(i) + "]";
      if (!f.IsMap()) return ErrorAt(file, f, path, "expected a mapping");
      for (const auto& kv : f) {
        std::string key = kv.first.Scalar();
        if (key != "cluster" && key != "type" && key != "node" && key != "at" && key != "until") {
          return ErrorAt(file, kv.first, path + "." + key, "unknown field (expected cluster, type, node, at, until)");
        }
      }
      Failure failure;
      if (!f["cluster"] || !f["cluster"].IsScalar()) return ErrorAt(file, f, path + ".cluster", "required");
      failure.cluster = f["cluster"].Scalar();
      std::string type = f["type"] && f["type"].IsScalar() ? f["type"].Scalar() : "";
      if (type == "outage") {
        failure.type = FailureType::kOutage;
      } else if (type == "node-loss") {
        failure.type = FailureType::kNodeLoss;
      } else if (type == "spot-reclaim") {
        failure.type = FailureType::kSpotReclaim;
      } else {
        return ErrorAt(file, f["type"] ? f["type"] : f, path + ".type", "expected outage, node-loss or spot-reclaim");
      }
      Result<Duration> at = DurationField(file, f, "at", path);
      if (!at.ok()) return at.status();
      failure.at = *at;
      if (failure.type == FailureType::kOutage) {
        Result<Duration> until = DurationField(file, f, "until", path);
        if (!until.ok()) return until.status();
        if (*until <= *at) return ErrorAt(file, f["until"], path + ".until", "must be after `at`");
        failure.until = *until;
      } else {
        if (!f["node"] || !f["node"].IsScalar()) return ErrorAt(file, f, path + ".node", "required for " + type);
        failure.node = f["node"].Scalar();
      }
      out.failures.push_back(failure);
    }
  }
  return out;
}

}  // namespace gpufed::connectors::sim
