#pragma once
// The inputs of a one-shot plan from the command line (`gpufed plan`, `gpufed audit
// record`): the active revision, `--now` and the optional `--workloads` files.
#include <optional>
#include <string>
#include <vector>

#include "controller/placement/plan.h"
#include "policies/engine/activation.h"

namespace gpufed::cli {

struct PlanInputs {
  std::vector<model::Workload> extra;  // from --workloads; must outlive `snapshot`
  placement::Snapshot snapshot;        // points into `extra` or the revision's config
};

// Fills `inputs` for a plan over `revision`. Returns an exit code on bad input (2 for a
// bad --now, 1 for invalid workload files, reported on stderr as `command: ...` and
// file:line:col lines), or nullopt on success.
std::optional<int> ReadPlanInputs(const char* command, policy::Revision& revision, const std::string& now_text,
                                  const std::vector<std::string>& workload_paths, PlanInputs& inputs);

}  // namespace gpufed::cli
