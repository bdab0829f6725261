#pragma once
// The `gpufed audit` subcommands, split over audit_command.cc (keygen, record, verify,
// ship), audit_query.cc (query, report), audit_replay.cc (replay) and audit_prove.cc
// (prove, verify-proof) and audit_archive.cc (archive, and the --archive option).
#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/audit/env.h"
#include "controller/audit/verify.h"

namespace gpufed::cli {

void AddAuditQueryCommands(CLI::App& audit, int* exit_code);
void AddAuditReplayCommand(CLI::App& audit, int* exit_code);
void AddAuditProveCommands(CLI::App& audit, int* exit_code);
void AddAuditArchiveCommand(CLI::App& audit, int* exit_code);

// The file system a command reads `audit_dir`'s journal through: with `archives`
// (--archive), the journal and its archive folders as one history (audit/archive_env.h).
std::unique_ptr<audit::Env> JournalEnv(const std::string& audit_dir, const std::vector<std::string>& archives);
// Adds the --archive option (repeatable) that fills `archives`.
void AddArchiveOption(CLI::App* command, std::vector<std::string>* archives);

// A journal folder in retention's terms (controller/audit/archive.h), for `audit verify`.
struct Retention {
  bool is_archive = false;      // the folder is an archive (it carries archive.json)
  std::string archive_of;       // the live journal's folder, as the archiver named it
  uint64_t archived_twice = 0;  // with --archive: segments in both folders (an interrupted move)
};
// Reads `path`'s archive marker and, for each of `archives`, checks that the segments both
// it and `path` hold are identical; nullopt after printing a FAILED line when not.
std::optional<Retention> CheckRetention(const std::string& path, const std::vector<std::string>& archives);
// The lines that say which part of the history a verification covered.
void PrintRetention(const audit::VerifyReport& r, const Retention& retention, const std::string& path,
                    const std::vector<std::string>& archives);

}  // namespace gpufed::cli
