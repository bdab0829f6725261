// gpufed version [--json] and gpufed --version: what this binary is (build_info.h).
#include <iostream>

#include <nlohmann/json.hpp>

#include "controller/cli/commands.h"

namespace gpufed::cli {

void AddVersionCommand(CLI::App& app, const BuildInfo& build) {
  app.set_version_flag("--version", "gpufed " + build.version);
  CLI::App* cmd = app.add_subcommand("version", "Print the gpufed version, commit, build type and allocator");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "One JSON object: version, commit, buildType, allocator");
  cmd->callback([json, build] {
    if (*json) {
      std::cout << nlohmann::json{{"version", build.version},
                                  {"commit", build.commit},
                                  {"buildType", build.build_type},
                                  {"allocator", build.allocator}}
                       .dump()
                << "\n";
      return;
    }
    std::cout << "gpufed " << build.version << "\ncommit " << build.commit << "\nbuild " << build.build_type
              << "\nallocator " << build.allocator << "\n";
  });
}

}  // namespace gpufed::cli
