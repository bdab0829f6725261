#pragma once
// Safe activation of policy revisions. A revision becomes active only if it validates,
// every Lua file compiles and every PolicyTest in the repository passes; otherwise the
// last good revision stays active and the rejection is kept with its reasons. Used by
// `gpufed plan`, `gpufed test` and the reconcile loop.
#include <functional>
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
  std::vector<std::string> failing_tests;  // TestGate::kReport: the PolicyTests that fail
  config::LoadResult load;             // diagnostics of the load
};

// What the PolicyTests decide about a revision.
enum class TestGate {
  kRequirePass,  // a failing test rejects it (activation: the controller, plan, audit)
  kSkip,         // not run (`gpufed test`, which runs and reports them itself)
  kReport,       // run, and listed in failing_tests without rejecting (`plan --ignore-tests`)
};

// Validates `paths` (YAML and Lua, validation.h; each Cluster's connector block by the
// provider in `connectors`, which may be null: ProductLoadOptions), compiles the Lua and
// runs the PolicyTests as `tests` says.
Candidate PrepareRevision(const std::vector<std::string>& paths, const model::ConnectorCatalog* connectors,
                          TestGate tests = TestGate::kRequirePass, const LuaLimits& limits = {});

class PolicyActivator {
 public:
  // `connectors` checks each revision's connector blocks (PrepareRevision); it must
  // outlive the activator.
  explicit PolicyActivator(const model::ConnectorCatalog* connectors = nullptr) : connectors_(connectors) {}
  // What the caller must also accept before a checked revision becomes active (the
  // controller makes the connectors it declares): problems, one line each; none to admit.
  using Gate = std::function<std::vector<std::string>(const Revision&)>;
  // Tries the repository at `paths`. OK when it became active; FailedPrecondition
  // (with the reasons, also in last_rejection()) when the last good one stays.
  Status Reload(const std::vector<std::string>& paths, const Gate& gate = {});
  // Makes `revision`, which the caller prepared (PrepareRevision), the active one:
  // `gpufed plan --state`, which may let failing PolicyTests through (TestGate::kReport).
  void Adopt(std::unique_ptr<Revision> revision) { active_ = std::move(revision); }

  const Revision* active() const { return active_.get(); }
  // The same, for a reader that works on it without the owner's lock (the API parses a
  // submission against it while a pass runs): a later Reload does not free it under them.
  std::shared_ptr<const Revision> shared_active() const { return active_; }
  // Revision name (Git commit or content hash) of the last rejected attempt, and why.
  const std::string& rejected_revision() const { return rejected_revision_; }
  const std::vector<std::string>& last_rejection() const { return last_rejection_; }

 private:
  const model::ConnectorCatalog* connectors_ = nullptr;
  std::shared_ptr<Revision> active_;
  std::string rejected_revision_;
  std::vector<std::string> last_rejection_;
};

}  // namespace gpufed::policy
