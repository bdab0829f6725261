#pragma once
// Registration of each subcommand. Each Add* function adds its subcommand to `app`
// and stores the exit code of a run in *exit_code.
#include <CLI/CLI.hpp>

#include "connectors/core/registry.h"

namespace gpufed::cli {

void AddValidateCommand(CLI::App& app, int* exit_code);
// `plan --state` observes clusters through `registry` (may be null: --state unavailable).
void AddPlanCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry);
void AddTestCommand(CLI::App& app, int* exit_code);
void AddDocsCommand(CLI::App& app, int* exit_code);
void AddAuditCommand(CLI::App& app, int* exit_code);
// `run` creates connectors through `registry` (owned by main; may be null).
void AddRunCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry);
void AddSubmitCommand(CLI::App& app, int* exit_code);
void AddGetCommand(CLI::App& app, int* exit_code);
void AddCancelCommand(CLI::App& app, int* exit_code);
void AddExplainCommand(CLI::App& app, int* exit_code);

}  // namespace gpufed::cli
