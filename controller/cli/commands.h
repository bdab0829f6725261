#pragma once
// Registration of each subcommand. Each Add* function adds its subcommand to `app`
// and stores the exit code of a run in *exit_code.
#include <CLI/CLI.hpp>

namespace gpufed::cli {

void AddValidateCommand(CLI::App& app, int* exit_code);
void AddPlanCommand(CLI::App& app, int* exit_code);
void AddTestCommand(CLI::App& app, int* exit_code);

}  // namespace gpufed::cli
