#include "controller/config/references.h"

#include <filesystem>
#include <set>

#include "controller/common/text.h"
#include "controller/config/loader.h"
#include "controller/config/repository.h"
#include "policies/stdlib/stdlib.h"
#include "controller/model/views.h"

namespace gpufed::config {
namespace fs = std::filesystem;
namespace {

void Report(Diagnostics& diagnostics, const model::SourceLocation& at, const std::string& field,
            const std::string& message) {
  diagnostics.Add({at.file, at.line, at.column, field, message});
}

template <typename T>
void CheckUnique(const std::vector<T>& items, const char* kind, Diagnostics& diagnostics) {
  std::map<std::string, const model::ObjectMeta*> seen;
  for (const T& item : items) {
    const model::ObjectMeta& meta = item.metadata;
    if (meta.name.empty()) continue;
    auto [it, inserted] = seen.emplace(meta.name, &meta);
    if (!inserted) {
      const model::SourceLocation& first = it->second->location;
      Report(diagnostics, meta.location, "metadata.name",
             std::string("duplicate ") + kind + " '" + meta.name + "' (first defined at " + first.file + ":" +
                 std::to_string(first.line) + ")");
    }
  }
}

template <typename T>
std::vector<std::string_view> Names(const std::vector<T>& items) {
  std::vector<std::string_view> names;
  for (const T& item : items) names.push_back(item.metadata.name);
  return names;
}

std::string Suggest(const std::string& word, const std::vector<std::string_view>& candidates) {
  std::string best = ClosestMatch(word, candidates);
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

// Maps whose keys are the user's own (labels, prices by model...): any key is valid.
bool IsOpenMap(const std::string& key) {
  static const std::set<std::string> kOpen = {"labels", "annotations", "env", "gpuHour", "spotGpuHour"};
  return kOpen.count(key) > 0;
}

// Empty when the path exists in the view's shape; otherwise the problem.
std::string CheckPath(const nlohmann::json& view, const std::string& path) {
  const nlohmann::json* node = &view;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    if (dot == std::string::npos) dot = path.size();
    std::string segment = path.substr(start, dot - start);
    if (!node->is_object()) return "'" + segment + "' is below a field that has no sub-fields";
    auto it = node->find(segment);
    if (it == node->end()) {
      std::vector<std::string_view> keys;
      for (auto k = node->begin(); k != node->end(); ++k) keys.push_back(k.key());
      return "unknown field '" + segment + "'" + Suggest(segment, keys);
    }
    if (IsOpenMap(segment)) return "";
    node = &*it;
    start = dot + 1;
  }
  return "";
}

}  // namespace

void ResolvePriority(model::Workload& w, const std::map<std::string, int>& classes) {
  if (w.has_priority) return;
  auto it = classes.find(w.priority_class.empty() ? "normal" : w.priority_class);
  if (it == classes.end()) return;  // reported as an unknown class
  w.priority = it->second;
  w.has_priority = true;
}

void ResolvePriorities(model::Config& config, const std::map<std::string, int>& classes) {
  for (model::Workload& w : config.workloads) ResolvePriority(w, classes);
  for (model::PolicyTest& t : config.policy_tests) {
    for (model::PolicyTestCase& c : t.cases) ResolvePriority(c.workload, classes);
  }
}

const std::map<std::string, int>& DefaultPriorityClasses() {
  static const std::map<std::string, int> kDefaults = {
      {"low", 100}, {"normal", 500}, {"high", 1000}, {"critical", 10000}};
  return kDefaults;
}

void ResolveImports(const std::vector<Reference>& references, model::Config& config, Diagnostics& diagnostics) {
  std::vector<std::string_view> available;
  for (const auto& [path, text] : stdlib::Files()) {
    if (path.size() > 5 && path.compare(path.size() - 5, 5, ".yaml") == 0) available.push_back(path);
  }
  std::set<std::string> bad;
  for (const Reference& ref : references) {
    if (ref.kind != ReferenceKind::kImport || stdlib::Files().count(ref.name + ".yaml")) continue;
    std::vector<std::string_view> names;
    std::vector<std::string> owned;
    for (std::string_view a : available) owned.emplace_back(a.substr(0, a.size() - 5));
    for (const std::string& o : owned) names.push_back(o);
    Report(diagnostics, ref.location, ref.field,
           "unknown standard-library policy '" + ref.name + "'" + Suggest(ref.name, names) + " (available: " +
               Join(owned, ", ") + ")");
    bad.insert(ref.name);
  }
  for (model::Policy& policy : config.policies) {
    if (policy.import.empty() || bad.count(policy.import)) continue;
    const std::string file = policy.import + ".yaml";
    LoadResult library = LoadText(std::string(stdlib::Files().at(file)), file);
    if (!library.ok() || library.config.policies.size() != 1) {
      Report(diagnostics, policy.metadata.location, "spec.import",
             "standard-library policy " + file + " is broken: " +
                 (library.ok() ? "expected one Policy" : library.diagnostics.items()[0].ToString()));
      continue;
    }
    const model::Policy& base = library.config.policies.front();
    std::vector<model::Rule> rules = base.rules;
    rules.insert(rules.end(), policy.rules.begin(), policy.rules.end());
    policy.rules = std::move(rules);
    std::vector<std::string> lua = base.lua_files;
    lua.insert(lua.end(), policy.lua_files.begin(), policy.lua_files.end());
    policy.lua_files = std::move(lua);
    nlohmann::json params = base.params;
    for (auto it = policy.params.begin(); it != policy.params.end(); ++it) params[it.key()] = it.value();
    policy.params = std::move(params);
    if (!policy.enforcement_set) policy.enforcement = base.enforcement;
    if (!policy.weights) policy.weights = base.weights;
    if (!policy.burst.queue_wait) policy.burst.queue_wait = base.burst.queue_wait;
    if (!policy.burst.queue_depth) policy.burst.queue_depth = base.burst.queue_depth;
    for (const auto& [name, value] : base.priority_classes) policy.priority_classes.emplace(name, value);
    for (const std::string& path : base.lua_files) {
      auto source = stdlib::Files().find(path);
      if (source != stdlib::Files().end()) config.lua_sources[path] = std::string(source->second);
    }
  }
}

void LoadLuaSources(const std::string& root, const std::vector<Reference>& references, size_t max_bytes,
                    model::Config& config, Diagnostics& diagnostics, std::vector<std::string>& hashed_files) {
  for (const Reference& ref : references) {
    if (ref.kind != ReferenceKind::kLuaFile || config.lua_sources.count(ref.name)) continue;
    if (ref.name.rfind("stdlib/", 0) == 0) {
      auto source = stdlib::Files().find(ref.name);
      if (source == stdlib::Files().end()) {
        Report(diagnostics, ref.location, ref.field, "no standard-library Lua file '" + ref.name + "'");
      } else {
        config.lua_sources[ref.name] = std::string(source->second);
      }
      continue;
    }
    fs::path relative = fs::path(ref.name).lexically_normal();
    if (relative.is_absolute() || relative.empty() || *relative.begin() == "..") {
      Report(diagnostics, ref.location, ref.field, "Lua file '" + ref.name + "' must be a path inside the repository");
      continue;
    }
    if (relative.extension() != ".lua") {
      Report(diagnostics, ref.location, ref.field, "Lua file '" + ref.name + "' must end in .lua");
      continue;
    }
    std::string full = (fs::path(root) / relative).string();
    Result<std::string> text = ReadFileBounded(full, max_bytes);
    if (!text.ok()) {
      std::error_code ec;
      Report(diagnostics, ref.location, ref.field,
             fs::exists(full, ec) ? "Lua file '" + ref.name + "': " + text.status().message()
                                  : "Lua file '" + ref.name + "' not found (looked for " + full + ")");
      continue;
    }
    config.lua_sources[ref.name] = std::move(*text);
    hashed_files.push_back(full);
  }
}

void CheckRepository(const std::vector<Reference>& references, model::Config& config, Diagnostics& diagnostics,
                     const model::Config* context) {
  CheckUnique(config.clusters, "Cluster", diagnostics);
  CheckUnique(config.workloads, "Workload", diagnostics);
  CheckUnique(config.tenants, "Tenant", diagnostics);
  CheckUnique(config.policies, "Policy", diagnostics);
  CheckUnique(config.policy_tests, "PolicyTest", diagnostics);
  CheckUnique(config.audit_sinks, "AuditSink", diagnostics);

  std::map<std::string, int> classes = DefaultPriorityClasses();
  for (const model::Config* source : {context, static_cast<const model::Config*>(&config)}) {
    if (source == nullptr) continue;
    for (const model::Policy& p : source->policies) {
      for (const auto& [name, value] : p.priority_classes) classes[name] = value;
    }
  }
  std::vector<std::string_view> tenants = Names(config.tenants);
  std::vector<std::string_view> clusters = Names(config.clusters);
  if (context != nullptr) {
    for (std::string_view n : Names(context->tenants)) tenants.push_back(n);
    for (std::string_view n : Names(context->clusters)) clusters.push_back(n);
  }
  std::vector<std::string_view> class_names;
  for (const auto& [name, value] : classes) class_names.push_back(name);

  const nlohmann::json workload_shape = model::WorkloadView(model::Workload{});
  model::Cluster sample_cluster;
  sample_cluster.node_pools.emplace_back();
  const nlohmann::json cluster_shape = model::ClusterView(sample_cluster);
  const nlohmann::json node_shape = model::NodePoolView(model::NodePool{});

  auto contains = [](const std::vector<std::string_view>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  for (const Reference& ref : references) {
    std::string problem;
    switch (ref.kind) {
      case ReferenceKind::kTenant:
        if (!contains(tenants, ref.name)) problem = "unknown tenant '" + ref.name + "'" + Suggest(ref.name, tenants);
        break;
      case ReferenceKind::kCluster:
        if (!contains(clusters, ref.name)) problem = "unknown cluster '" + ref.name + "'" + Suggest(ref.name, clusters);
        break;
      case ReferenceKind::kPriorityClass:
        if (!classes.count(ref.name)) {
          problem = "unknown priority class '" + ref.name + "'" + Suggest(ref.name, class_names) +
                    " (define it in a Policy's priorityClasses, or use an integer)";
        }
        break;
      case ReferenceKind::kWorkloadPath: problem = CheckPath(workload_shape, ref.name); break;
      case ReferenceKind::kClusterPath: problem = CheckPath(cluster_shape, ref.name); break;
      case ReferenceKind::kNodePath: problem = CheckPath(node_shape, ref.name); break;
      case ReferenceKind::kLuaFile:  // checked while loading the sources
      case ReferenceKind::kImport: break;  // checked while resolving imports
    }
    if (!problem.empty()) Report(diagnostics, ref.location, ref.field, problem);
  }

  ResolvePriorities(config, classes);
}

}  // namespace gpufed::config
