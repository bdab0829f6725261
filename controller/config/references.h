#pragma once
// Checks that need the whole repository: unique names, references between resources,
// field paths of rules, Lua files; and resolving priority class names.
#include <map>
#include <string>
#include <vector>

#include "controller/config/diagnostics.h"
#include "controller/config/loader.h"
#include "controller/config/yaml_field.h"
#include "controller/model/config.h"

namespace gpufed::config {

// Built-in priority classes; a Policy's priorityClasses add to or override them.
const std::map<std::string, int>& DefaultPriorityClasses();

// Sets a workload's integer priority from its class name ("normal" when none).
void ResolvePriority(model::Workload& workload, const std::map<std::string, int>& classes);
void ResolvePriorities(model::Config& config, const std::map<std::string, int>& classes);

// Merges the standard-library policy each Policy imports (`import: stdlib/NAME`): its
// rules come first, its Lua files, params (the importer's override), burst, weights and
// priority classes where the importer sets none; enforcement stays the importer's.
// `library` (may be null: nothing to import) as LoadOptions::library.
void ResolveImports(const std::vector<Reference>& references, const LibraryFiles* library, model::Config& config,
                    Diagnostics& diagnostics);

// Reads every Lua file a Policy names (repo-relative, inside the root, bounded in size)
// into config.lua_sources, and appends the files read to `hashed_files`. Paths under
// stdlib/ come from `library` (may be null).
void LoadLuaSources(const std::string& root, const std::vector<Reference>& references, const LibraryFiles* library,
                    size_t max_bytes,
                    model::Config& config, Diagnostics& diagnostics, std::vector<std::string>& hashed_files);

// A document that did not parse: resources it may define are unknown.
struct UnparsedDocument {
  std::string file;
  std::string text;
};

// Duplicate names and dangling references (tenants, clusters, priority classes, and
// the tenants, clusters, pools, GPU models, MIG profiles and datasets rules compare
// with); resolves workload priorities. `context` (may be null) supplies resources
// defined elsewhere. A name that is unknown but written in an `unparsed` document is
// a note ("not checked: ... did not parse"), not an error: that document may define it.
void CheckRepository(const std::vector<Reference>& references, model::Config& config, Diagnostics& diagnostics,
                     const model::Config* context, const std::vector<UnparsedDocument>& unparsed = {});

}  // namespace gpufed::config
