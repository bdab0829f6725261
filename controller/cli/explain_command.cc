// gpufed explain NAME: why a workload waits, why it runs where it runs, and why not
// on each other cluster (every rule that filtered a cluster is named).
#include <iostream>

#include "controller/cli/api_client.h"
#include "controller/cli/commands.h"

namespace gpufed::cli {

void AddExplainCommand(CLI::App& app, int* exit_code) {
  auto target = std::make_shared<ApiTarget>();
  auto name = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("explain", "Explain a workload's placement");
  cmd->add_option("name", *name, "Workload name")->required();
  cmd->add_flag("--json", *json, "Print the API's JSON");
  AddApiTargetOptions(cmd, *target);
  cmd->callback([=] {
    Result<ApiResponse> r = CallApi(*target, "GET", target->tenant.empty() ? "/v1/explain/" + *name : WorkloadsPath(*target, *name) + "/explain");
    if (!r.ok()) {
      std::cerr << "gpufed explain: " << r.status().message() << "\n";
      *exit_code = 1;
      return;
    }
    if (r->status != 200) {
      *exit_code = ReportApiError("explain", *r);
      return;
    }
    if (*json) {
      std::cout << r->body.dump(2) << "\n";
      return;
    }
    const auto& b = r->body;
    std::cout << b.value("workload", "") << " (" << b.value("tenant", "") << "): " << b.value("state", "") << ", attempt "
              << b.value("attempt", 1) << "\n";
    for (const auto& line : b["why"]) std::cout << "  " << line.get<std::string>() << "\n";
    if (b.contains("history")) {
      std::cout << "history:\n";
      for (const auto& h : b["history"]) {
        std::cout << "  " << h.value("at", "") << "  " << h.value("from", "") << " -> " << h.value("to", "") << ": "
                  << h.value("reason", "") << "\n";
      }
    }
  });
}

}  // namespace gpufed::cli
