// gpufed get workloads|clusters [NAME]: tables from the controller's API.
#include <cstdio>
#include <iostream>

#include "controller/cli/api_client.h"
#include "controller/cli/commands.h"

namespace gpufed::cli {
namespace {

int Get(const ApiTarget& target, const std::string& what, const std::string& name, bool json) {
  std::string path = what == "clusters" ? "/v1/clusters" : WorkloadsPath(target, name);
  Result<ApiResponse> r = CallApi(target, "GET", path);
  if (!r.ok()) {
    std::cerr << "gpufed get: " << r.status().message() << "\n";
    return 1;
  }
  if (r->status != 200) return ReportApiError("get", *r);
  if (json) {
    std::cout << r->body.dump(2) << "\n";
    return 0;
  }
  nlohmann::json items = r->body.contains("items") ? r->body["items"] : nlohmann::json::array({r->body});
  char line[512];
  if (what == "clusters") {
    std::printf("%-14s %-8s %6s %6s %8s %7s  %s\n", "CLUSTER", "HEALTHY", "NODES", "GPUS", "FREE", "RUNNING", "API");
    for (const auto& c : items) {
      std::string api = c.value("api", "");  // "slurmrestd API v0.0.42 (Slurm 24.11.5)"; "" for sim/local
      std::snprintf(line, sizeof line, "%-14s %-8s %6d %6d %8d %7d  %s", c.value("name", "").c_str(),
                    c.value("healthy", false) ? "yes" : "no", c.value("nodes", 0), c.value("gpus", 0),
                    c.value("gpus_free", 0), c.value("running", 0), api.empty() ? "-" : api.c_str());
      std::cout << line << "\n";
    }
    return 0;
  }
  std::printf("%-28s %-12s %-10s %-3s %-11s %s\n", "WORKLOAD", "TENANT", "STATE", "TRY", "CLUSTER", "REASON");
  for (const auto& w : items) {
    std::snprintf(line, sizeof line, "%-28s %-12s %-10s %-3d %-11s %s", w.value("name", "").c_str(),
                  w.value("tenant", "").c_str(), w.value("state", "").c_str(), w.value("attempt", 1),
                  w.value("cluster", "").c_str(), w.value("reason", "").substr(0, 90).c_str());
    std::cout << line << "\n";
  }
  return 0;
}

}  // namespace

void AddGetCommand(CLI::App& app, int* exit_code) {
  auto target = std::make_shared<ApiTarget>();
  auto what = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("get", "List workloads or clusters of a running controller");
  cmd->add_option("what", *what, "workloads or clusters")->required()->check(CLI::IsMember({"workloads", "clusters"}));
  cmd->add_option("name", *name, "One workload");
  cmd->add_flag("--json", *json, "Print the API's JSON");
  AddApiTargetOptions(cmd, *target);
  cmd->callback([=] { *exit_code = Get(*target, *what, *name, *json); });
}

}  // namespace gpufed::cli
