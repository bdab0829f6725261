// gpufed audit archive DIR --before DATE|SEQ --to ARCHIVE_DIR: retention, moving sealed
// segments of a journal to an archive folder (controller/audit/archive.h); and the
// --archive option of the commands that read a journal's history.
#include <charconv>
#include <iostream>

#include <nlohmann/json.hpp>

#include "controller/audit/archive.h"
#include "controller/audit/archive_env.h"
#include "controller/cli/audit_commands.h"
#include "controller/common/time_text.h"

namespace gpufed::cli {

std::unique_ptr<audit::Env> JournalEnv(const std::string& audit_dir, const std::vector<std::string>& archives) {
  if (archives.empty()) return audit::NewPosixEnv();
  return audit::NewArchiveViewEnv(audit::NewPosixEnv(), audit_dir, archives);
}

void AddArchiveOption(CLI::App* command, std::vector<std::string>* archives) {
  command
      ->add_option("--archive", *archives,
                   "An archive folder of the journal (gpufed audit archive --to): read it and the journal as one "
                   "history (repeat it for several)")
      ->allow_extra_args(false);  // one folder per --archive, so a positional may follow
}

std::optional<Retention> CheckRetention(const std::string& path, const std::vector<std::string>& archives) {
  auto plain = audit::NewPosixEnv();  // each folder as it is, not the view of both
  audit::Env& env = *plain;
  Retention out;
  Result<std::string> marker = env.ReadFile(path + "/" + audit::kArchiveMarkerFile);
  if (marker.ok()) {
    out.is_archive = true;
    nlohmann::json j = nlohmann::json::parse(*marker, nullptr, false);
    if (j.is_object() && j.contains("archiveOf") && j["archiveOf"].is_string()) out.archive_of = j["archiveOf"];
  }
  for (const std::string& archive : archives) {
    Result<std::vector<std::string>> twice = audit::ArchivedTwice(env, path, archive);
    if (!twice.ok()) {
      std::cout << "FAILED: " << twice.status().message() << "\n";
      return std::nullopt;
    }
    out.archived_twice += twice->size();
  }
  return out;
}

void PrintRetention(const audit::VerifyReport& r, const Retention& retention, const std::string& path,
                    const std::vector<std::string>& archives) {
  if (!archives.empty()) {
    std::cout << "read as one history with the archive" << (archives.size() > 1 ? "s" : "");
    for (const std::string& a : archives) std::cout << " " << a;
    std::cout << "\n";
    if (retention.archived_twice > 0) {
      std::cout << "NOTE: " << retention.archived_twice
                << " segment(s) are in both the journal and an archive, identical (an interrupted gpufed audit "
                   "archive; its next run finishes the move)\n";
    }
  }
  if (r.first_seq > 1) {
    std::cout << "NOTE: the journal begins at seq " << r.first_seq << ": seq 1-" << r.first_seq - 1
              << " are not in this folder (archived by gpufed audit archive, or removed); seq " << r.first_seq
              << "'s prev " << r.first_prev << " is checked against them only with --archive ARCHIVE_DIR\n";
  }
  if (retention.is_archive) {
    std::cout << "an archive" << (retention.archive_of.empty() ? "" : " of " + retention.archive_of)
              << " (gpufed audit archive): it ends at seq " << r.last_seq
              << " and the history continues in the live journal; verify both with gpufed audit verify "
              << (retention.archive_of.empty() ? "AUDIT_DIR" : retention.archive_of) << " --archive " << path << "\n";
  }
}

namespace {

struct ArchiveCommandOptions {
  std::string audit_dir;
  std::string archive_dir;
  std::string before;
  std::string key;  // default: <audit_dir>/signing.pub when it exists
  bool dry_run = false;
};

int RunArchive(const ArchiveCommandOptions& o) {
  const char* cmd = "gpufed audit archive: ";
  audit::ArchiveOptions ao;
  auto env = audit::NewPosixEnv();
  ao.env = env.get();
  ao.audit_dir = o.audit_dir;
  ao.archive_dir = o.archive_dir;
  ao.dry_run = o.dry_run;
  uint64_t seq = 0;
  auto [end, ec] = std::from_chars(o.before.data(), o.before.data() + o.before.size(), seq);
  if (ec == std::errc() && end == o.before.data() + o.before.size() && seq > 0) {
    ao.before_seq = seq;
  } else if (std::optional<int64_t> t = ParseTimeMicros(o.before)) {
    ao.before_micros = t;
  } else {
    std::cerr << cmd << "--before takes a date (2026-11-01), an RFC 3339 UTC time (2026-11-01T10:00:00Z) or a seq, "
              << "not '" << o.before << "'\n";
    return 2;
  }
  const std::string key_path = o.key.empty() ? o.audit_dir + "/signing.pub" : o.key;
  std::optional<audit::SignatureVerifier> key;
  if (!o.key.empty() || env->FileExists(key_path)) {
    Result<std::string> pem = env->ReadFile(key_path);
    Result<audit::SignatureVerifier> k =
        pem.ok() ? audit::SignatureVerifier::FromPublicKeyPem(*pem) : Result<audit::SignatureVerifier>(pem.status());
    if (!k.ok()) {
      std::cerr << cmd << key_path << ": " << k.status().message() << "\n";
      return 2;
    }
    key.emplace(std::move(k).value());
    ao.key = &*key;
  }
  Result<audit::ArchiveResult> result = audit::ArchiveSegments(ao);
  if (!result.ok()) {
    std::cerr << cmd << result.status().message() << "\n";
    return result.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  const char* verb = o.dry_run ? "would archive " : "archived ";
  for (const audit::ArchivedSegment& s : result->moved) {
    std::cout << verb << s.name << " (seq " << s.first_seq << "-" << s.last_seq << ", last record "
              << FormatTimeMicros(s.last_time_micros) << ")" << (s.resumed ? ", finishing an interrupted move" : "")
              << "\n";
  }
  if (result->moved.empty()) std::cout << "nothing to archive";
  std::cout << (result->moved.empty() ? ": " : "stopped: ") << result->stopped << "\n";
  if (!result->moved.empty()) {
    std::cout << "the live journal " << (o.dry_run ? "would begin" : "begins") << " at seq " << result->live_first_seq
              << "; read both as one history with --archive " << o.archive_dir << " (gpufed audit verify "
              << o.audit_dir << " --archive " << o.archive_dir << ")\n";
  }
  return 0;
}

}  // namespace

void AddAuditArchiveCommand(CLI::App& audit, int* exit_code) {
  auto o = std::make_shared<ArchiveCommandOptions>();
  CLI::App* archive = audit.add_subcommand(
      "archive",
      "Move sealed journal segments, unchanged, to an archive folder: those whose last record is before --before "
      "(a date or time) or whose last seq is below it (a number); safe beside a running controller");
  archive->add_option("audit_dir", o->audit_dir, "Audit folder (holds journal/; a controller's: <state>/audit)")
      ->required();
  archive->add_option("--before", o->before, "A date (2026-11-01), RFC 3339 UTC time, or a seq")->required();
  archive->add_option("--to", o->archive_dir, "The archive folder (created 0700; its journal/ gets the segments)")
      ->required();
  archive->add_option("-k,--key", o->key,
                      "Public key to check the moved segments' checkpoint signatures (default: "
                      "AUDIT_DIR/signing.pub when it exists)");
  archive->add_flag("--dry-run", o->dry_run, "Say what would be archived and why the rest stays; move nothing");
  archive->callback([o, exit_code] { *exit_code = RunArchive(*o); });
}

}  // namespace gpufed::cli
