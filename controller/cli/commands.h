#pragma once
// Registration of each subcommand. Each Add* function adds its subcommand to `app`
// and stores the exit code of a run in *exit_code.
#include <CLI/CLI.hpp>

#include "connectors/core/registry.h"
#include "controller/common/build_info.h"

namespace gpufed::cli {

// `registry` (owned by main; may be null) is also the catalog of connector providers the
// commands that load a repository check each Cluster's spec.connector against
// (validate, plan, test, audit record and ship, run), and whose schema `docs` prints.
void AddValidateCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry);
// `plan --state` observes clusters through `registry` (may be null: --state unavailable).
void AddPlanCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry);
void AddTestCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry);
void AddDocsCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry);
void AddAuditCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry);
// `run` creates connectors through `registry` (owned by main; may be null); `build` names
// the binary in its journal and on /metrics.
void AddRunCommand(CLI::App& app, int* exit_code, const connectors::ConnectorRegistry* registry,
                   const BuildInfo& build);
// `state backup DEST` and `state restore SRC --state DIR`.
void AddStateCommand(CLI::App& app, int* exit_code);
// `version [--json]` and `--version`.
void AddVersionCommand(CLI::App& app, const BuildInfo& build);
void AddSubmitCommand(CLI::App& app, int* exit_code);
void AddGetCommand(CLI::App& app, int* exit_code);
void AddCancelCommand(CLI::App& app, int* exit_code);
void AddExplainCommand(CLI::App& app, int* exit_code);

}  // namespace gpufed::cli
