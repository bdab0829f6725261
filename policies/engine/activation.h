#pragma once
// Safe activation of policy revisions. A revision becomes active only if it validates,
// every Lua file compiles and every PolicyTest in the repository passes; otherwise the
// last good revision stays active and the rejection is kept with its reasons. Used by
// `gpufed plan`, `gpufed test` and the reconcile loop.
#include <memory>
#include <string>
#include <vector>

#include "controller/common/status.h"
#include "controller/config/loader.h"
#include "policies/engine/hook_set.h"
#include "policies/engine/test_runner.h"

namespace gpufed::policy {

// A loaded, compiled and tested repository; the unit that is activated or rejected.
struct Revision {
  model::Config config;
  std::unique_ptr<HookSet> hooks;
  TestReport tests;

  Revision() = default;
  Revision(const Revision&) = delete;
  Revision& operator=(const Revision&) = delete;
};

struct Candidate {
  std::unique_ptr<Revision> revision;  // set when every check passed
  std::vector<std::string> problems;   // why it was rejected: diagnostics, Lua, tests
  config::LoadResult load;             // diagnostics of the load
};

// Loads `paths`, compiles the Lua and runs the PolicyTests. `run_tests` false skips
// the tests (for `gpufed test`, which reports them itself).
Candidate PrepareRevision(const std::vector<std::string>& paths, bool run_tests = true, const LuaLimits& limits = {});

class PolicyActivator {
 public:
  // Tries the repository at `paths`. OK when it became active; FailedPrecondition
  // (with the reasons, also in last_rejection()) when the last good one stays.
  Status Reload(const std::vector<std::string>& paths);

  const Revision* active() const { return active_.get(); }
  // Revision name (Git commit or content hash) of the last rejected attempt, and why.
  const std::string& rejected_revision() const { return rejected_revision_; }
  const std::vector<std::string>& last_rejection() const { return last_rejection_; }

 private:
  std::unique_ptr<Revision> active_;
  std::string rejected_revision_;
  std::vector<std::string> last_rejection_;
};

}  // namespace gpufed::policy
