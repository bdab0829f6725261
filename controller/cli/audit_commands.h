#pragma once
// The `gpufed audit` subcommands, split over audit_command.cc (keygen, record, verify,
// ship), audit_query.cc (query, report), audit_replay.cc (replay), audit_prove.cc
// (prove, verify-proof, vkey) and audit_rotate_key.cc (rotate-key).
#include <CLI/CLI.hpp>

namespace gpufed::cli {

void AddAuditQueryCommands(CLI::App& audit, int* exit_code);
void AddAuditReplayCommand(CLI::App& audit, int* exit_code);
void AddAuditProveCommands(CLI::App& audit, int* exit_code);
void AddAuditRotateKeyCommand(CLI::App& audit, int* exit_code);

}  // namespace gpufed::cli
