#pragma once
// The one way the audit commands get back the policy revision a journalled decision was
// made under (`audit replay`, `audit report`). The journal keeps no copy of a revision:
// a decision names its revision and its snapshot (`inputs`), the snapshot names the
// repository the revision was loaded from, and that repository, or a folder the operator
// names with --repo because it moved, is loaded again and must hash to the recorded
// revision (a Git checkout's revision is its commit and that hash). A revision no such
// folder holds any more cannot be recovered: the caller says so.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "controller/common/status.h"
#include "policies/engine/activation.h"

namespace gpufed::cli {

class RecordedRevisions {
 public:
  // `moved`: folders to try, in order, before the repository the snapshot recorded.
  explicit RecordedRevisions(std::vector<std::string> moved = {});
  ~RecordedRevisions();

  // The repository at `repo` as it is now, loaded once (validated, its Lua compiled, its
  // PolicyTests run; no connector made, and its connector blocks are not checked, so a
  // revision loads whatever connector providers this build has). NotFound when there is
  // no such folder; FailedPrecondition with the reasons when it does not activate.
  Result<const policy::Revision*> Load(const std::string& repo);

  // The revision `revision` from the --repo folders, then `recorded_repo` (may be empty:
  // a decision without a snapshot). NotFound naming each folder tried and what it holds
  // when none is at that revision.
  Result<const policy::Revision*> Find(const std::string& recorded_repo, const std::string& revision);

 private:
  std::vector<std::string> moved_;
  std::map<std::string, Result<std::unique_ptr<policy::Revision>>> loaded_;  // by folder, failures too
};

}  // namespace gpufed::cli
