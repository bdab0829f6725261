#pragma once
// The `gpufed audit` subcommands, split over audit_command.cc (keygen, record, verify,
// ship), audit_query.cc (query, report), audit_replay.cc (replay) and audit_prove.cc
// (prove, verify-proof).
#include <CLI/CLI.hpp>

namespace gpufed::cli {

void AddAuditQueryCommands(CLI::App& audit, int* exit_code);
void AddAuditReplayCommand(CLI::App& audit, int* exit_code);
void AddAuditProveCommands(CLI::App& audit, int* exit_code);

}  // namespace gpufed::cli
