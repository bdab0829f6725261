#pragma once
// Checks that need the whole repository: unique names, references between resources,
// field paths of rules, Lua files; and resolving priority class names.
#include <map>
#include <string>
#include <vector>

#include "controller/config/diagnostics.h"
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
void ResolveImports(const std::vector<Reference>& references, model::Config& config, Diagnostics& diagnostics);

// Reads every Lua file a Policy names (repo-relative, inside the root, bounded in size)
// into config.lua_sources, and appends the files read to `hashed_files`. Paths under
// stdlib/ come from the embedded standard library.
void LoadLuaSources(const std::string& root, const std::vector<Reference>& references, size_t max_bytes,
                    model::Config& config, Diagnostics& diagnostics, std::vector<std::string>& hashed_files);

// Duplicate names, dangling references, unknown rule field paths; resolves workload
// priorities. `context` (may be null) supplies resources defined elsewhere.
void CheckRepository(const std::vector<Reference>& references, model::Config& config, Diagnostics& diagnostics,
                     const model::Config* context);

}  // namespace gpufed::config
