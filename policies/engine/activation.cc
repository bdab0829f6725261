#include "policies/engine/activation.h"

#include "controller/common/text.h"
#include "policies/engine/validation.h"

namespace gpufed::policy {

Candidate PrepareRevision(const std::vector<std::string>& paths, const model::ConnectorCatalog* connectors,
                          TestGate tests, const LuaLimits& limits) {
  Candidate candidate;
  candidate.load = ValidateRepository(paths, ValidateOptions{.load = ProductLoadOptions(connectors), .lua = limits});
  if (!candidate.load.ok()) {
    for (const config::Diagnostic& d : candidate.load.diagnostics.items()) candidate.problems.push_back(d.ToString());
    return candidate;
  }
  auto revision = std::make_unique<Revision>();
  revision->config = std::move(candidate.load.config);
  Result<std::unique_ptr<HookSet>> hooks = HookSet::Compile(revision->config, limits);
  if (!hooks.ok()) {
    candidate.problems.push_back("Lua: " + hooks.status().message());
    candidate.load.config = std::move(revision->config);
    return candidate;
  }
  revision->hooks = std::move(*hooks);
  if (tests != TestGate::kSkip) {
    revision->tests = RunPolicyTests(revision->config, revision->hooks.get());
    for (const CaseResult& c : revision->tests.cases) {
      if (c.passed) continue;
      std::string failure = "PolicyTest " + c.full_name() + " (" + c.location.file + ":" +
                            std::to_string(c.location.line) + "): " +
                            (!c.error.empty()         ? "error: " + c.error
                             : !c.hook_errors.empty() ? "hook error: " + c.hook_errors.front()
                                                      : "expected " + c.expected + ", got " + c.actual);
      (tests == TestGate::kReport ? candidate.failing_tests : candidate.problems).push_back(std::move(failure));
    }
  }
  if (candidate.problems.empty()) {
    candidate.revision = std::move(revision);
  } else {
    candidate.load.config = std::move(revision->config);
  }
  return candidate;
}

Status PolicyActivator::Reload(const std::vector<std::string>& paths, const Gate& gate) {
  Candidate candidate = PrepareRevision(paths, connectors_);
  if (candidate.revision && gate) {
    std::vector<std::string> refused = gate(*candidate.revision);
    if (!refused.empty()) {
      candidate.problems = std::move(refused);
      candidate.revision.reset();
    }
  }
  if (candidate.revision) {
    active_ = std::move(candidate.revision);
    rejected_revision_.clear();
    last_rejection_.clear();
    return Status::Ok();
  }
  rejected_revision_ = candidate.load.config.revision;
  last_rejection_ = candidate.problems;
  std::string kept = active_ ? "; revision " + active_->config.revision + " stays active" : "; no revision is active";
  return FailedPrecondition("policy revision " + rejected_revision_ + " rejected (" +
                            std::to_string(last_rejection_.size()) + " problem(s))" + kept + ": " +
                            Join(last_rejection_, "; "));
}

}  // namespace gpufed::policy
