#include "controller/cli/plan_inputs.h"

#include <iostream>

#include "controller/config/loader.h"
#include "controller/placement/snapshot_builder.h"

namespace gpufed::cli {

std::optional<int> ReadPlanInputs(const char* command, policy::Revision& revision, const std::string& now_text,
                                  const std::vector<std::string>& workload_paths, PlanInputs& inputs) {
  Result<Duration> now = Duration::Parse(now_text);
  if (!now.ok()) {
    std::cerr << command << ": --now: " << now.status().message() << "\n";
    return 2;
  }
  if (!workload_paths.empty()) {
    // Workload files are read on their own, with names resolved against the repository.
    config::LoadResult more = config::LoadRepository(workload_paths, {}, &revision.config);
    if (!more.ok()) {
      for (const config::Diagnostic& d : more.diagnostics.items()) std::cerr << d.ToString() << "\n";
      return 1;
    }
    inputs.extra = std::move(more.config.workloads);
  }
  // Nothing has run and nothing is observed: the declared node pools, and each tenant's
  // declared spend (the one builder fills it in, as for a running controller's plans).
  placement::SnapshotFacts facts;
  facts.config = &revision.config;
  facts.now = *now;
  facts.hooks = revision.hooks.get();
  const std::vector<model::Workload>& pending = workload_paths.empty() ? revision.config.workloads : inputs.extra;
  for (const model::Workload& w : pending) facts.pending.push_back(&w);
  inputs.snapshot = placement::BuildSnapshot(std::move(facts));
  return std::nullopt;
}

}  // namespace gpufed::cli
