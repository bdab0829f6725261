#include "connectors/sim/scenario.h"

#include <filesystem>

#include "controller/common/bounded_read.h"
#include "controller/common/yaml_tree.h"

namespace gpufed::connectors::sim {
namespace {

// A scenario is small and written by hand: these bound a hostile or mistaken file, in bytes
// before it is read and in nodes as it is parsed.
constexpr size_t kMaxScenarioBytes = size_t{16} << 20;
constexpr size_t kMaxScenarioNodes = 200000;

Status ErrorAt(const std::string& file, const YamlNode& node, const std::string& field, const std::string& msg) {
  const YamlMark mark = node.Mark();
  return InvalidArgument(file + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1) + ": " +
                         field + ": " + msg);
}

// The scalar at `key` of `map`, or nullptr when it is missing, null or not a scalar.
const YamlNode* ScalarAt(const YamlNode& map, std::string_view key) {
  const YamlNode* n = map.Find(key);
  return n != nullptr && n->IsScalar() ? n : nullptr;
}

Result<Duration> DurationField(const std::string& file, const YamlNode& parent, const std::string& key,
                               const std::string& path) {
  const YamlNode* n = parent.Find(key);
  if (n == nullptr || n->IsNull()) return ErrorAt(file, parent, path + "." + key, "required");
  if (!n->IsScalar()) return ErrorAt(file, *n, path + "." + key, "expected a duration such as 90m");
  Result<Duration> d = Duration::Parse(n->Scalar());
  if (!d.ok()) return ErrorAt(file, *n, path + "." + key, d.status().message());
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
  Result<std::string> text = ReadFileBounded(path, kMaxScenarioBytes);
  if (!text.ok()) return Status(text.status().code(), path + ": scenario: " + text.status().message());
  return ParseScenario(*text, path, std::filesystem::path(path).parent_path().string());
}

Result<Scenario> ParseScenario(const std::string& text, const std::string& file, const std::string& base_dir) {
  const YamlStream stream = YamlStream::Parse(text, {.max_documents = 1, .max_nodes_per_document = kMaxScenarioNodes});
  if (const std::optional<YamlProblem>& problem = stream.problem()) {
    return InvalidArgument(file + ":" + std::to_string(problem->line) + ":" + std::to_string(problem->column) + ": " +
                           problem->message);
  }
  Scenario out;
  if (stream.documents().empty() || stream.documents()[0]->IsNull()) return out;
  const YamlNode& root = *stream.documents()[0];
  if (!root.IsMap()) return ErrorAt(file, root, "(document)", "expected a mapping");
  for (const YamlNode::Entry& kv : root.entries()) {
    const std::string& key = kv.key->Scalar();
    if (!kv.key->IsScalar() || (key != "submissions" && key != "failures")) {
      return ErrorAt(file, *kv.key, key, "unknown field (expected submissions, failures)");
    }
  }
  if (const YamlNode* subs = root.Find("submissions"); subs != nullptr && !subs->IsNull()) {
    if (!subs->IsSequence()) return ErrorAt(file, *subs, "submissions", "expected a list of Workload files");
    for (const YamlNode* s : subs->elements()) {
      if (!s->IsScalar()) return ErrorAt(file, *s, "submissions", "expected a file path");
      std::filesystem::path p(s->Scalar());
      out.submissions.push_back(p.is_absolute() || base_dir.empty() ? p.string()
                                                                    : (std::filesystem::path(base_dir) / p).string());
    }
  }
  if (const YamlNode* fails = root.Find("failures"); fails != nullptr && !fails->IsNull()) {
    if (!fails->IsSequence()) return ErrorAt(file, *fails, "failures", "expected a list");
    for (size_t i = 0; i < fails->size(); ++i) {
      const YamlNode& f = *fails->elements()[i];
      std::string path = "failures[" + std::to_string(i) + "]";
      if (!f.IsMap()) return ErrorAt(file, f, path, "expected a mapping");
      for (const YamlNode::Entry& kv : f.entries()) {
        const std::string& key = kv.key->Scalar();
        if (!kv.key->IsScalar() ||
            (key != "cluster" && key != "type" && key != "node" && key != "at" && key != "until")) {
          std::string field = path;
          field.append(".").append(key);
          return ErrorAt(file, *kv.key, field, "unknown field (expected cluster, type, node, at, until)");
        }
      }
      Failure failure;
      const YamlNode* cluster = ScalarAt(f, "cluster");
      if (cluster == nullptr) return ErrorAt(file, f, path + ".cluster", "required");
      failure.cluster = cluster->Scalar();
      const YamlNode* type_node = ScalarAt(f, "type");
      const std::string type = type_node != nullptr ? type_node->Scalar() : "";
      if (type == "outage") {
        failure.type = FailureType::kOutage;
      } else if (type == "node-loss") {
        failure.type = FailureType::kNodeLoss;
      } else if (type == "spot-reclaim") {
        failure.type = FailureType::kSpotReclaim;
      } else {
        const YamlNode* written = f.Find("type");
        return ErrorAt(file, written != nullptr ? *written : f, path + ".type",
                       "expected outage, node-loss or spot-reclaim");
      }
      Result<Duration> at = DurationField(file, f, "at", path);
      if (!at.ok()) return at.status();
      failure.at = *at;
      if (failure.type == FailureType::kOutage) {
        Result<Duration> until = DurationField(file, f, "until", path);
        if (!until.ok()) return until.status();
        if (*until <= *at) return ErrorAt(file, *f.Find("until"), path + ".until", "must be after `at`");
        failure.until = *until;
      } else {
        const YamlNode* node = ScalarAt(f, "node");
        if (node == nullptr) return ErrorAt(file, f, path + ".node", "required for " + type);
        failure.node = node->Scalar();
      }
      out.failures.push_back(failure);
    }
  }
  return out;
}

}  // namespace gpufed::connectors::sim
