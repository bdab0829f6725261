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

// The repository's revision: "sha256:" + a SHA-256 over every file's repo-relative path
// and contents in sorted order (YAML and Lua alike), so the same tree always has the same
// revision. At the top of a Git checkout: "<commit>+sha256:<first 16 hex digits of it>",
// the commit (HEAD resolved through refs and packed-refs) and the content read: the
// working tree is read, so an uncommitted edit or a half-done pull under the same commit
// is another revision, and the commit alone never names content it does not hold.
inline constexpr size_t kRevisionContentHexDigits = 16;
std::string ComputeRevision(const std::string& root, const std::vector<std::string>& files);
// A revision as people read it in lines of text: 12 digits of the commit, and 8 of the
// content hash after it ("0123456789ab+3f2a9c1d"), or 12 of the content hash alone.
std::string ShortRevision(const std::string& revision);
// The Git commit a revision names: what comes before "+sha256:"; "" for a revision of
// content alone (not a Git checkout).
std::string RevisionCommit(const std::string& revision);

}  // namespace gpufed::config
