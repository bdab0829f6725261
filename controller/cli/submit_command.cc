// gpufed submit FILE: sends one Workload (YAML or JSON) to the controller's API.
#include <fstream>
#include <iostream>
#include <sstream>

#include "controller/cli/api_client.h"
#include "controller/cli/commands.h"

namespace gpufed::cli {

void AddSubmitCommand(CLI::App& app, int* exit_code) {
  auto target = std::make_shared<ApiTarget>();
  auto file = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("submit", "Submit a Workload file to a running controller");
  cmd->add_option("file", *file, "Workload file (YAML or JSON)")->required();
  AddApiTargetOptions(cmd, *target);
  cmd->callback([=] {
    std::ifstream in(*file);
    if (!in) {
      std::cerr << "gpufed submit: cannot read " << *file << "\n";
      *exit_code = 2;
      return;
    }
    std::ostringstream text;
    text << in.rdbuf();
    bool json = file->size() > 5 && file->substr(file->size() - 5) == ".json";
    Result<ApiResponse> r =
        CallApi(*target, "POST", WorkloadsPath(*target), text.str(), json ? "application/json" : "application/yaml");
    if (!r.ok()) {
      std::cerr << "gpufed submit: " << r.status().message() << "\n";
      *exit_code = 1;
      return;
    }
    if (r->status != 201) {
      // The server labels the body it parsed request.yaml (or .json); the user wrote FILE.
      ApiResponse shown = *r;
      if (shown.body.is_object() && shown.body.contains("error") && shown.body["error"].is_object() &&
          shown.body["error"].value("message", nlohmann::json()).is_string()) {
        std::string message = shown.body["error"]["message"].get<std::string>();
        const std::string label = json ? "request.json:" : "request.yaml:";
        for (size_t at = message.find(label); at != std::string::npos; at = message.find(label, at + file->size())) {
          message.replace(at, label.size(), *file + ":");
        }
        shown.body["error"]["message"] = message;
      }
      *exit_code = ReportApiError("submit", shown);
      return;
    }
    std::cout << "submitted " << r->body.value("name", "") << " (uid " << r->body.value("uid", "") << ")\n";
  });
}

}  // namespace gpufed::cli
