// gpufed plan --config DIR [--workloads PATH]: one placer pass over the declared fleet.
#include <iostream>

#include "controller/cli/commands.h"
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
};

void PrintDiagnostics(const config::LoadResult& result) {
  for (const config::Diagnostic& d : result.diagnostics.items()) std::cerr << d.ToString() << "\n";
}

int RunPlan(const PlanOptions& options) {
  // The same activation rules as the controller: it validates, its Lua compiles and
  // its PolicyTests pass, or nothing is planned.
  policy::Candidate candidate = policy::PrepareRevision({options.config_dir});
  if (!candidate.revision) {
    for (const std::string& p : candidate.problems) std::cerr << p << "\n";
    std::cerr << "gpufed plan: policy revision rejected; nothing was planned\n";
    return 1;
  }
  policy::Revision& revision = *candidate.revision;
  Result<Duration> now = Duration::Parse(options.now);
  if (!now.ok()) {
    std::cerr << "gpufed plan: --now: " << now.status().message() << "\n";
    return 2;
  }
  std::vector<model::Workload> extra;
  if (!options.workloads.empty()) {
    // Workload files are read on their own, with names resolved against the repository.
    config::LoadResult more = config::LoadRepository(options.workloads, {}, &revision.config);
    if (!more.ok()) {
      PrintDiagnostics(more);
      return 1;
    }
    extra = std::move(more.config.workloads);
  }
  placement::Snapshot snapshot;
  snapshot.config = &revision.config;
  snapshot.now = *now;
  snapshot.hooks = revision.hooks.get();
  const std::vector<model::Workload>& workloads = options.workloads.empty() ? revision.config.workloads : extra;
  for (const model::Workload& w : workloads) snapshot.pending.push_back(&w);
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
  cmd->callback([options, exit_code] { *exit_code = RunPlan(*options); });
}

}  // namespace gpufed::cli
