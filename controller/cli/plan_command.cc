// gpufed plan --config DIR [--workloads PATH]: one placer pass over the declared fleet.
// gpufed plan --config DIR --state STATE: the decisions the next pass of the controller
// whose state is in STATE would make (its store, its clusters as they report now).
#include <filesystem>
#include <iostream>

#include "controller/cli/commands.h"
#include "controller/cli/plan_inputs.h"
#include "controller/cli/plan_output.h"
#include "controller/config/loader.h"
#include "controller/runtime/app.h"
#include "policies/engine/activation.h"

namespace gpufed::cli {
namespace {

struct PlanOptions {
  std::string config_dir;
  std::vector<std::string> workloads;
  std::string output = "table";
  std::string now = "0s";
  std::string state_dir;
  std::string scenario;
  bool ignore_tests = false;
};

int RunPlan(const PlanOptions& options, const connectors::ConnectorRegistry* registry) {
  // The same activation rules as the controller: it validates, its Lua compiles and
  // its PolicyTests pass, or nothing is planned. --ignore-tests lets an author see what
  // a revision with failing tests would do; the controller never activates one.
  policy::Candidate candidate =
      policy::PrepareRevision({options.config_dir}, registry,
                              options.ignore_tests ? policy::TestGate::kReport : policy::TestGate::kRequirePass);
  for (const std::string& failing : candidate.failing_tests) std::cerr << "warning: " << failing << "\n";
  if (!candidate.revision) {
    for (const std::string& p : candidate.problems) std::cerr << p << "\n";
    std::cerr << "gpufed plan: policy revision rejected; nothing was planned\n";
    return 1;
  }
  if (!options.state_dir.empty()) {
    if (registry == nullptr || !options.workloads.empty()) {
      std::cerr << "gpufed plan: --state plans the controller's own workloads (no --workloads)\n";
      return 2;
    }
    // The App of `gpufed run`, opened read-only on that state (its scenario's failures
    // played as the run plays them): nothing in the folder changes.
    runtime::AppOptions app_options;
    app_options.config_dir = options.config_dir;
    app_options.state_dir = options.state_dir;
    app_options.scenario = options.scenario;
    Result<std::unique_ptr<runtime::App>> app =
        runtime::App::OpenReadOnly(app_options, *registry, std::move(candidate.revision));
    Result<placement::Plan> plan = app.ok() ? (*app)->controller().Preview() : Result<placement::Plan>(app.status());
    if (!plan.ok()) {
      std::cerr << "gpufed plan: " << plan.status().message() << "\n";
      return 1;
    }
    const model::Config& config = (*app)->revision().config;
    std::cout << (options.output == "json" ? PlanToJson(*plan, config).dump(2) + "\n" : RenderPlanTable(*plan, config));
    return 0;
  }
  policy::Revision& revision = *candidate.revision;
  PlanInputs inputs;
  if (std::optional<int> code = ReadPlanInputs("gpufed plan", revision, options.now, options.workloads, inputs)) {
    return *code;
  }
  const placement::Snapshot& snapshot = inputs.snapshot;
  placement::Plan plan = placement::MakePlan(snapshot);
  if (options.output == "json") {
    std::cout << PlanToJson(plan, revision.config).dump(2) << "\n";
  } else {
    std::cout << RenderPlanTable(plan, revision.config);
  }
  return 0;
}

}  // namespace

void AddPlanCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* cmd = app.add_subcommand("plan", "Run the placer once over the clusters a policy repository declares");
  cmd->add_option("-c,--config", options->config_dir, "Policy repository directory")->required();
  cmd->add_option("-w,--workloads", options->workloads,
                  "Workload files or directories to plan instead of the repository's own Workloads");
  cmd->add_option("-o,--output", options->output, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  cmd->add_option("--now", options->now, "Virtual time of the plan, for queue-wait (e.g. 15m)")->capture_default_str();
  cmd->add_option("--state", options->state_dir,
                  "A controller's state folder: plan what its next pass would (read-only)");
  cmd->add_option("--scenario", options->scenario, "With --state: the run's sim scenario (default as gpufed run)");
  cmd->add_flag("--ignore-tests", options->ignore_tests,
                "Plan even if PolicyTests fail (a warning per failing test; the controller never activates such a "
                "revision)");
  cmd->callback([options, exit_code, registry] { *exit_code = RunPlan(*options, registry); });
}

}  // namespace gpufed::cli
