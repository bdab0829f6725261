#pragma once
// Finding a policy repository's files and naming its revision.
#include <string>
#include <vector>

#include "controller/common/status.h"

namespace gpufed::config {

// Resource files under `paths`: each directory is walked recursively for *.yaml and
// *.yml (hidden entries skipped, and every path listed in a `.gpufedignore` file at the
// directory's top, one repo-relative prefix per line); files are taken as given.
// Sorted and de-duplicated so loading order never depends on the file system.
Result<std::vector<std::string>> ListResourceFiles(const std::vector<std::string>& paths);

// The repository's revision: the Git commit when `root` is the top of a Git checkout
// (HEAD resolved through refs and packed-refs), otherwise "sha256:" + a SHA-256 over
// every file's repo-relative path and contents in sorted order (YAML and Lua alike),
// so the same tree always has the same revision.
std::string ComputeRevision(const std::string& root, const std::vector<std::string>& files);

// Reads a whole file, refusing files above `max_bytes`.
Result<std::string> ReadFileBounded(const std::string& path, size_t max_bytes);

}  // namespace gpufed::config
