#pragma once
// The `gpufed audit` subcommands, split over audit_command.cc (keygen, record, verify,
// ship), audit_query.cc (query, report), audit_replay.cc (replay), audit_prove.cc
// (prove, verify-proof, vkey), audit_witness.cc (witness, and verify's witness check),
// audit_archive.cc (archive, and the --archive option), audit_rotate_key.cc (rotate-key)
// and audit_store.cc (export, and the --store option: the journal in PostgreSQL).
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/audit/env.h"
#include "controller/audit/journal_storage.h"
#include "controller/audit/proofs.h"
#include "controller/audit/signing.h"
#include "controller/audit/snapshot_store.h"
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
void AddAuditRotateKeyCommand(CLI::App& audit, int* exit_code);

// The journal in PostgreSQL (audit_store.cc): `audit export`, and `--store` for verify,
// query, report, replay and prove. A source over a read-only session; errors name --store, never its text.
void AddAuditExportCommand(CLI::App& audit, int* exit_code);
// `what` the option reads there, for its help ("the journal").
void AddStoreOption(CLI::App* command, std::string* store, std::string_view what = "the journal");
Result<std::unique_ptr<audit::JournalRecordSource>> OpenStoreSource(const std::string& store);
// `audit prove --store`: the table's tree, every line read once over a read-only session
// and single records read back through a source on the same policy.
Result<audit::JournalProver> LoadStoreProver(const std::string& store);
// Where a command reads the passes' snapshots (replay, report): with `store` the
// database's table (pgjournal/pg_snapshot_store.h), read first, and `audit_dir`'s files
// (when given) for what the table lacks: a database journalled before the table existed
// kept them in the leader's state folder. Without `store`, `audit_dir`'s files alone.
Result<std::unique_ptr<audit::SnapshotStore>> OpenSnapshotStore(audit::Env* env, const std::string& audit_dir,
                                                                const std::string& store);
// The table's lines from seq 1 through the verifier (a damaged row is the report's
// failure, as a damaged line of a folder is).
Result<audit::VerifyReport> VerifyStore(const std::string& store, const audit::VerifyOptions& options);

}  // namespace gpufed::cli
