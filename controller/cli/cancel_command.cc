// gpufed cancel NAME: asks the controller to cancel a workload (SIGTERM, then SIGKILL
// after the grace period, on `local` clusters).
#include <iostream>

#include "controller/cli/api_client.h"
#include "controller/cli/commands.h"

namespace gpufed::cli {

void AddCancelCommand(CLI::App& app, int* exit_code) {
  auto target = std::make_shared<ApiTarget>();
  auto name = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("cancel", "Cancel a workload on a running controller");
  cmd->add_option("name", *name, "Workload name")->required();
  AddApiTargetOptions(cmd, *target);
  cmd->callback([=] {
    Result<ApiResponse> r = CallApi(*target, "DELETE", WorkloadsPath(*target, *name));
    if (!r.ok()) {
      std::cerr << "gpufed cancel: " << r.status().message() << "\n";
      *exit_code = 1;
      return;
    }
    if (r->status != 202) {
      *exit_code = ReportApiError("cancel", *r);
      return;
    }
    std::cout << "cancel requested for " << *name << "\n";
  });
}

}  // namespace gpufed::cli
