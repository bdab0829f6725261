#include "controller/config/references.h"

#include <cctype>
#include <filesystem>
#include <set>
#include <unordered_set>

#include "controller/common/bounded_read.h"
#include "controller/common/text.h"
#include "controller/config/loader.h"
#include "controller/config/priority_cap.h"
#include "controller/config/repository.h"

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

std::string Suggest(const std::string& word, const std::vector<std::string_view>& candidates) {
  std::string best = ClosestMatch(word, candidates);
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

// Calls `visit` with every name of `kind` that `config` declares (an empty one too)
// until it returns true; returns whether it did.
template <typename Visit>
bool AnyDeclared(const model::Config& config, ReferenceKind kind, Visit&& visit) {
  switch (kind) {
    case ReferenceKind::kTenant:
      for (const model::Tenant& t : config.tenants)
        if (visit(std::string_view(t.metadata.name))) return true;
      return false;
    case ReferenceKind::kCluster:
      for (const model::Cluster& c : config.clusters)
        if (visit(std::string_view(c.metadata.name))) return true;
      return false;
    case ReferenceKind::kPool:
    case ReferenceKind::kGpuModel:
    case ReferenceKind::kMigProfile:
      for (const model::Cluster& c : config.clusters) {
        for (const model::NodePool& pool : c.node_pools) {
          if (kind == ReferenceKind::kPool && visit(std::string_view(pool.name))) return true;
          if (kind == ReferenceKind::kGpuModel && visit(std::string_view(pool.gpu.model))) return true;
          if (kind != ReferenceKind::kMigProfile) continue;
          for (const std::string& p : pool.gpu.mig_profiles)
            if (visit(std::string_view(p))) return true;
        }
      }
      return false;
    case ReferenceKind::kDataset:
      for (const model::Cluster& c : config.clusters) {
        for (const std::string& d : c.datasets)
          if (visit(std::string_view(d))) return true;
      }
      for (const model::Workload& w : config.workloads)
        if (visit(std::string_view(w.data.dataset))) return true;
      return false;
    case ReferenceKind::kConnectorType:
      for (const model::Cluster& c : config.clusters)
        if (visit(std::string_view(c.connector.type))) return true;
      return false;
    default: return false;
  }
}

// The names of one kind a reference may use: those the checked text declares, hashed,
// and those of its context (the active repository), searched per reference with an
// early exit. An API submission is checked against a repository whose 1,000 clusters
// declare thousands of pools, models and datasets; indexing them for every submission
// was most of the loop's time spent reading specs.
struct NameSet {
  const char* kind = "";
  const model::Config* context = nullptr;
  ReferenceKind of = ReferenceKind::kTenant;
  std::vector<std::string_view> names;  // the text's own, in declaration order
  std::unordered_set<std::string_view> index;

  void Add(std::string_view name) {
    if (!name.empty() && index.insert(name).second) names.push_back(name);
  }
  bool contains(const std::string& name) const {
    if (index.count(name) != 0) return true;
    if (context == nullptr || name.empty()) return false;
    return AnyDeclared(*context, of, [&](std::string_view n) { return n == name; });
  }
  bool empty() const {
    return names.empty() &&
           (context == nullptr || !AnyDeclared(*context, of, [](std::string_view n) { return !n.empty(); }));
  }
  // Every name, the text's first (for "did you mean").
  std::vector<std::string_view> all() const {
    NameSet copy;
    for (std::string_view n : names) copy.Add(n);
    if (context != nullptr)
      AnyDeclared(*context, of, [&](std::string_view n) {
        copy.Add(n);
        return false;
      });
    return copy.names;
  }
};

// Whether `text` holds `name` as a word (not inside a longer name).
bool MentionsName(const std::string& text, const std::string& name) {
  auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  };
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const bool starts = at == 0 || !is_name_char(text[at - 1]);
    const bool ends = at + name.size() >= text.size() || !is_name_char(text[at + name.size()]);
    if (starts && ends) return true;
  }
  return false;
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
  for (model::Tenant& t : config.tenants) {
    if (t.max_priority || t.max_priority_class.empty()) continue;
    auto it = classes.find(t.max_priority_class);
    if (it != classes.end()) t.max_priority = it->second;  // else reported as an unknown class
  }
  auto resolve_given = [&](model::Given& given) {
    if (!given.running) return;
    for (model::GivenRunning& r : *given.running) ResolvePriority(r.workload, classes);
  };
  for (model::PolicyTest& t : config.policy_tests) {
    resolve_given(t.given);
    for (model::PolicyTestCase& c : t.cases) {
      ResolvePriority(c.workload, classes);
      resolve_given(c.given);
    }
  }
}

const std::map<std::string, int>& DefaultPriorityClasses() {
  static const std::map<std::string, int> kDefaults = {
      {"low", 100}, {"normal", 500}, {"high", 1000}, {"critical", 10000}};
  return kDefaults;
}

void ResolveImports(const std::vector<Reference>& references, const LibraryFiles* library, model::Config& config,
                    Diagnostics& diagnostics) {
  static const LibraryFiles kNone;
  const LibraryFiles& files = library != nullptr ? *library : kNone;
  std::vector<std::string_view> available;
  for (const auto& [path, text] : files) {
    if (path.size() > 5 && path.compare(path.size() - 5, 5, ".yaml") == 0) available.push_back(path);
  }
  std::set<std::string> bad;
  for (const Reference& ref : references) {
    if (ref.kind != ReferenceKind::kImport || files.count(ref.name + ".yaml")) continue;
    std::vector<std::string_view> names;
    std::vector<std::string> owned;
    names.reserve(available.size());
    owned.reserve(available.size());
    for (std::string_view a : available) owned.emplace_back(a.substr(0, a.size() - 5));
    for (const std::string& o : owned) names.push_back(o);
    Report(diagnostics, ref.location, ref.field,
           "unknown standard-library policy '" + ref.name + "'" + Suggest(ref.name, names) +
               " (available: " + Join(owned, ", ") + ")");
    bad.insert(ref.name);
  }
  for (model::Policy& policy : config.policies) {
    if (policy.import.empty() || bad.count(policy.import)) continue;
    const std::string file = policy.import + ".yaml";
    LoadOptions library_options;
    library_options.library = library;
    LoadResult imported = LoadText(std::string(files.at(file)), file, nullptr, library_options);
    if (!imported.ok() || imported.config.policies.size() != 1) {
      Report(diagnostics, policy.metadata.location, "spec.import",
             "standard-library policy " + file +
                 " is broken: " + (imported.ok() ? "expected one Policy" : imported.diagnostics.items()[0].ToString()));
      continue;
    }
    const model::Policy& base = imported.config.policies.front();
    std::vector<model::Rule> rules = base.rules;
    rules.insert(rules.end(), policy.rules.begin(), policy.rules.end());
    policy.rules = std::move(rules);
    std::vector<std::string> lua = base.lua_files;
    lua.insert(lua.end(), policy.lua_files.begin(), policy.lua_files.end());
    policy.lua_files = std::move(lua);
    nlohmann::json params = base.params;
    for (auto it = policy.params.begin(); it != policy.params.end(); ++it) params[it.key()] = it.value();
    policy.params = std::move(params);
    if (policy.parameters.empty()) policy.parameters = base.parameters;
    if (!policy.enforcement_set) policy.enforcement = base.enforcement;
    if (!policy.weights) policy.weights = base.weights;
    if (!policy.burst.queue_wait) policy.burst.queue_wait = base.burst.queue_wait;
    if (!policy.burst.queue_depth) policy.burst.queue_depth = base.burst.queue_depth;
    for (const auto& [name, value] : base.priority_classes) policy.priority_classes.emplace(name, value);
    for (const std::string& path : base.lua_files) {
      auto source = files.find(path);
      if (source != files.end()) config.lua_sources[path] = std::string(source->second);
    }
  }
}

void LoadLuaSources(const std::string& root, const std::vector<Reference>& references, const LibraryFiles* library,
                    size_t max_bytes, model::Config& config, Diagnostics& diagnostics,
                    std::vector<std::string>& hashed_files) {
  for (const Reference& ref : references) {
    if (ref.kind != ReferenceKind::kLuaFile || config.lua_sources.count(ref.name)) continue;
    if (ref.name.rfind("stdlib/", 0) == 0) {
      auto source = library != nullptr ? library->find(ref.name) : LibraryFiles::const_iterator{};
      if (library == nullptr || source == library->end()) {
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
                     const model::Config* context, const std::vector<UnparsedDocument>& unparsed) {
  CheckUnique(config.clusters, "Cluster", diagnostics);
  CheckUnique(config.workloads, "Workload", diagnostics);
  CheckUnique(config.tenants, "Tenant", diagnostics);
  CheckUnique(config.policies, "Policy", diagnostics);
  CheckUnique(config.policy_tests, "PolicyTest", diagnostics);
  CheckUnique(config.audit_sinks, "AuditSink", diagnostics);
  CheckUnique(config.audit_witnesses, "AuditWitness", diagnostics);
  // An API tokens file names roles and tenants in one column: these names are the roles.
  for (const model::Tenant& t : config.tenants) {
    if (t.metadata.name == "admin" || t.metadata.name == "metrics") {
      Report(diagnostics, t.metadata.location, "metadata.name",
             "tenant name '" + t.metadata.name + "' is reserved (API tokens files use it for a role)");
    }
  }

  std::map<std::string, int> classes = DefaultPriorityClasses();
  for (const model::Config* source : {context, static_cast<const model::Config*>(&config)}) {
    if (source == nullptr) continue;
    for (const model::Policy& p : source->policies) {
      for (const auto& [name, value] : p.priority_classes) classes[name] = value;
    }
  }
  std::map<ReferenceKind, NameSet> sets;
  for (auto [kind, what] : {std::pair{ReferenceKind::kTenant, "tenant"},
                            {ReferenceKind::kCluster, "cluster"},
                            {ReferenceKind::kPool, "node pool"},
                            {ReferenceKind::kGpuModel, "GPU model"},
                            {ReferenceKind::kMigProfile, "MIG profile"},
                            {ReferenceKind::kDataset, "dataset"},
                            {ReferenceKind::kConnectorType, "connector type"}}) {
    NameSet& set = sets[kind];
    set.kind = what;
    set.of = kind;
    set.context = context;
    AnyDeclared(config, kind, [&](std::string_view n) {
      set.Add(n);
      return false;
    });
  }
  NameSet& priority_classes = sets[ReferenceKind::kPriorityClass];
  priority_classes.kind = "priority class";
  priority_classes.of = ReferenceKind::kPriorityClass;
  for (const auto& [name, value] : classes) priority_classes.Add(name);  // the context's are in `classes`

  for (const Reference& ref : references) {
    auto set = sets.find(ref.kind);
    if (set == sets.end()) continue;  // Lua files and imports: checked while loading them
    const NameSet& known = set->second;
    // A rule's value is checked only against a kind the repository declares at all.
    if (known.contains(ref.name) || (ref.rule_value && known.empty())) continue;
    std::vector<std::string> unparsed_files;
    for (const UnparsedDocument& doc : unparsed) {
      if (MentionsName(doc.text, ref.name) &&
          std::find(unparsed_files.begin(), unparsed_files.end(), doc.file) == unparsed_files.end()) {
        unparsed_files.push_back(doc.file);
      }
    }
    if (!unparsed_files.empty()) {
      diagnostics.Add({ref.location.file, ref.location.line, ref.location.column, ref.field,
                       (unparsed_files.size() == 1 ? "not checked: file " : "not checked: files ") +
                           Join(unparsed_files, ", ") + " did not parse (" +
                           (unparsed_files.size() == 1 ? "it" : "they") + " may define " + known.kind + " '" +
                           ref.name + "')",
                       Severity::kNote});
      continue;
    }
    std::string problem = std::string("unknown ") + known.kind + " '" + ref.name + "'" + Suggest(ref.name, known.all());
    if (ref.kind == ReferenceKind::kPriorityClass) {
      problem += " (define it in a Policy's priorityClasses, or use an integer)";
    }
    Report(diagnostics, ref.location, ref.field, problem);
  }

  ResolvePriorities(config, classes);
  // After resolving: a cap or a priority may be a class name.
  for (const model::Workload& w : config.workloads) {
    const model::Tenant* tenant = config.FindTenant(w.tenant);
    if (tenant == nullptr && context != nullptr) tenant = context->FindTenant(w.tenant);
    if (tenant == nullptr || !w.has_priority) continue;  // unknown tenant or class: reported above
    if (std::optional<PriorityCap> cap = DeclaredPriorityCap(*tenant)) {
      if (std::optional<Diagnostic> above = CheckPriorityCap(w, *cap)) diagnostics.Add(std::move(*above));
    }
  }
}

}  // namespace gpufed::config
