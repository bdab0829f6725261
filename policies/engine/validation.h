#pragma once
// Validating a policy repository as `gpufed validate` and revision activation do: the
// YAML resources (config/) and the Lua hooks its Policies name, in one list of
// `file:line:col: error:` diagnostics.
#include <string>
#include <vector>

#include "controller/config/loader.h"
#include "policies/runtime/lua_policy.h"

namespace gpufed::policy {

// Compiles every Lua file the Policies of `config` name (its top level runs, under
// `limits`) and reports, at `<config.root>/<path>:LINE:COL` (column 1 when Lua gives
// none), what would stop it from loading as `lua: MESSAGE`: syntax errors, a top
// level that fails, a hook global that is not a function, and hooks declared with
// parameters they can never receive (admit(w, p), filter(w, c, p), score(w, c, p)),
// or a filter that cannot see the cluster.
void CheckLuaHooks(const model::Config& config, config::Diagnostics& diagnostics, const LuaLimits& limits = {});

// The loader options of the product: its repositories may import the embedded standard
// library (policies/stdlib), and each Cluster's connector block is checked by the
// provider its type names in `connectors` (main's connectors::ConnectorRegistry; null
// only where no connector is ever made from the result, see config::LoadOptions).
// Every full-repository load outside the engine takes these.
config::LoadOptions ProductLoadOptions(const model::ConnectorCatalog* connectors);

struct ValidateOptions {
  config::LoadOptions load = ProductLoadOptions(nullptr);  // set load.connectors to check connector blocks
  LuaLimits lua;
  // When not empty: report only diagnostics of these files (or of files below these
  // directories); the rest of the repository is loaded as their context. Each path
  // is compared as the file system resolves it, so "./a.yaml" names "repo/a.yaml".
  std::vector<std::string> only;
};

// LoadRepository(paths) plus CheckLuaHooks (with the standard library when
// options.load names none), sorted by file, line and column.
config::LoadResult ValidateRepository(const std::vector<std::string>& paths, const ValidateOptions& options = {});

}  // namespace gpufed::policy
