// gpufed plan --config DIR [--workloads PATH]: one placer pass over the declared fleet.
#include <iostream>

#include "controller/cli/commands.h"
#include "controller/cli/plan_inputs.h"
#include "controller/cli/plan_output.h"
#include "controller/config/loader.h"
#include "policies/engine/activation.h"

namespace gpufed::cli {
namespace {

struct PlanOptions {
  std::string config_dir;
  std::vector<std::string> workloads;
  std::string output = "table";
  std::string now = "0s";
  bool ignore_tests = false;
};

int RunPlan(const PlanOptions& options) {
  // The same activation rules as the controller: it validates, its Lua compiles and
  // its PolicyTests pass, or nothing is planned. --ignore-tests lets an author see what
  // a revision with failing tests would do; the controller never activates one.
  policy::Candidate candidate = policy::PrepareRevision(
      {options.config_dir}, options.ignore_tests ? policy::TestGate::kReport : policy::TestGate::kRequirePass);
  for (const std::string& failing : candidate.failing_tests) std::cerr << "warning: " << failing << "\n";
  if (!candidate.revision) {
    for (const std::string& p : candidate.problems) std::cerr << p << "\n";
    std::cerr << "gpufed plan: policy revision rejected; nothing was planned\n";
    return 1;
  }
  policy::Revision& revision = *candidate.revision;
  PlanInputs inputs;
  if (std::optional<int> code = ReadPlanInputs("gpufed plan", revision, options.now, options.workloads, inputs)) {
    return *code;
  }
  const placement::Snapshot& snapshot = inputs.snapshot;
  placement::Plan plan = placement::MakePlan(snapshot);
  if (options.output == "json") {
    std::cout << PlanToJson(plan).dump(2) << "\n";
  } else {
    std::cout << RenderPlanTable(plan, revision.config);
  }
  return 0;
}

}  // namespace

void AddPlanCommand(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand("plan", "Run the placer once over the clusters a policy repository declares");
  cmd->add_option("-c,--config", options->config_dir, "Policy repository directory")->required();
  cmd->add_option("-w,--workloads", options->workloads,
                  "Workload files or directories to plan instead of the repository's own Workloads");
  cmd->add_option("-o,--output", options->output, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->add_option("--now", options->now, "Virtual time of the plan, for queue-wait (e.g. 15m)")->capture_default_str();
  cmd->add_flag("--ignore-tests", options->ignore_tests,
                "Plan even if PolicyTests fail (a warning per failing test; the controller never activates such a "
                "revision)");
  cmd->callback([options, exit_code] { *exit_code = RunPlan(*options); });
}

}  // namespace gpufed::cli
