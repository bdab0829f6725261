#pragma once
// Loads a policy repository (directories and files of YAML resources plus the Lua
// files policies name) into a validated model::Config.
//
// Every problem of the whole repository is collected in one pass; each names file,
// line, column and field path. Oversize files, documents nested too deeply and alias
// bombs are errors, never crashes. The loader never throws.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "controller/config/diagnostics.h"
#include "controller/model/config.h"

namespace gpufed::config {

// Files a repository may use besides its own, by path ("stdlib/burst.yaml" -> text): a
// Policy's `import: stdlib/NAME` reads "stdlib/NAME.yaml", a Lua path under stdlib/ the
// file itself. The product passes policies/stdlib's embedded library (stdlib::Files());
// the loader knows no library of its own.
using LibraryFiles = std::map<std::string, std::string_view>;

struct LoadOptions {
  const LibraryFiles* library = nullptr;    // null: an import or a stdlib/ Lua path is an error
  // The connector providers a Cluster's spec.connector may name, which check their own
  // fields (the product passes main's connectors::ConnectorRegistry). Null: any type
  // and any fields are accepted here, and the provider checks the block when it creates
  // the connector; only a load that never makes connectors (tests, tools) passes null.
  const model::ConnectorCatalog* connectors = nullptr;
  size_t max_file_bytes = size_t{4} << 20;  // per YAML or Lua file
  int max_depth = 32;                       // nesting of mappings and lists
  size_t max_nodes_per_document = 200000;   // counts alias expansions: bounds alias bombs
  size_t max_documents_per_file = 10000;    // '---'-separated documents in one file
};

struct LoadResult {
  model::Config config;     // complete only when diagnostics is empty
  Diagnostics diagnostics;
  int documents = 0;
  int files = 0;

  bool ok() const { return diagnostics.errors() == 0; }
};

// `paths`: directories (walked recursively) and files. The repository root, against
// which Lua paths resolve and the revision is computed, is the first path when it is a
// directory, else that file's folder.
// Names of other resources also resolve against `context` (may be null), e.g. the
// active repository when loading extra Workload files.
LoadResult LoadRepository(const std::vector<std::string>& paths, const LoadOptions& options = {},
                          const model::Config* context = nullptr);

// Parses YAML text as if it were the file `file_name` (API submissions, tests).
// Names of other resources (tenants, clusters, priority classes) resolve against the
// text itself and, when given, against `context` (the active repository).
LoadResult LoadText(const std::string& text, const std::string& file_name, const model::Config* context = nullptr,
                    const LoadOptions& options = {});

}  // namespace gpufed::config
