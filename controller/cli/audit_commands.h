#pragma once
// The `gpufed audit` subcommands, split over audit_command.cc (keygen, record, verify,
// ship), audit_query.cc (query, report), audit_replay.cc (replay) and audit_prove.cc
// (prove, verify-proof) and audit_witness.cc (witness, and verify's witness check).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "controller/audit/env.h"
#include "controller/audit/signing.h"
#include "controller/audit/verify.h"
#include "controller/common/status.h"

namespace gpufed::cli {

void AddAuditQueryCommands(CLI::App& audit, int* exit_code);
void AddAuditReplayCommand(CLI::App& audit, int* exit_code);
void AddAuditProveCommands(CLI::App& audit, int* exit_code);
void AddAuditWitnessCommand(CLI::App& audit, int* exit_code);

// `verify --witness-vkey ... [--witness-quorum K] [--require-witnessed]` (audit_witness.cc).
struct VerifyWitnessOptions {
  bool require = false;
  std::vector<std::string> vkeys;
  size_t quorum = 0;  // 0: all given
};
struct WitnessVerdict {
  bool ok = true;       // false: a witness saw another history, or (required) records are not witnessed
  nlohmann::json json;  // null when nothing was asked
  std::string text;
};
Result<WitnessVerdict> CheckJournalWitnessed(audit::Env& env, const std::string& audit_dir,
                                             const audit::SignatureVerifier* key, const audit::VerifyReport& report,
                                             const VerifyWitnessOptions& options);

}  // namespace gpufed::cli
