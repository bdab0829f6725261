// gpufed state backup DEST --state DIR [--include-secrets] [--wait 120s]
// gpufed state restore SRC --state DIR
// A consistent copy of a (running) controller's state folder, and putting one back into a
// new folder (runtime/state_backup.h says what a backup holds).
#include <iostream>
#include <memory>

#include "controller/cli/commands.h"
#include "controller/runtime/state_backup.h"

namespace gpufed::cli {
namespace {

struct StateOptions {
  std::string state_dir = "gpufed-state";
  std::string folder;
  bool include_secrets = false;
  std::string wait = "120s";
};

// An empty folder name would put the files in the root folder ("" + "/gpufed.db").
bool Named(const StateOptions& o, const char* command) {
  if (!o.state_dir.empty() && !o.folder.empty()) return true;
  std::cerr << "gpufed state " << command << ": the state folder and the backup folder need names\n";
  return false;
}

int Backup(const StateOptions& o) {
  if (!Named(o, "backup")) return 2;
  Result<Duration> wait = Duration::Parse(o.wait);
  if (!wait.ok()) {
    std::cerr << "gpufed state backup: bad --wait: " << wait.status().message() << "\n";
    return 2;
  }
  runtime::BackupOptions b;
  b.state_dir = o.state_dir;
  b.destination = o.folder;
  b.include_secrets = o.include_secrets;
  b.wait = *wait;
  Result<runtime::BackupSummary> done = runtime::BackupState(b);
  if (!done.ok()) {
    std::cerr << "gpufed state backup: " << done.status().message() << "\n";
    return 1;
  }
  std::cout << "backed up " << o.state_dir << " to " << o.folder << ": " << done->files << " files, " << done->bytes
            << " bytes; the journal up to seq " << done->journal_last_seq << " (a signed checkpoint)"
            << (o.include_secrets ? "; the signing key and admin token included" : "; secrets left out") << "\n";
  return 0;
}

int Restore(const StateOptions& o) {
  if (!Named(o, "restore")) return 2;
  Result<runtime::BackupSummary> done = runtime::RestoreState(o.folder, o.state_dir);
  if (!done.ok()) {
    std::cerr << "gpufed state restore: " << done.status().message() << "\n";
    return 1;
  }
  std::cout << "restored " << o.folder << " into " << o.state_dir << ": " << done->files << " files, " << done->bytes
            << " bytes, checked against the backup's manifest; the journal ends at seq " << done->journal_last_seq
            << "\n";
  return 0;
}

}  // namespace

void AddStateCommand(CLI::App& app, int* exit_code) {
  CLI::App* state = app.add_subcommand("state", "Back up and restore a controller's state folder");
  state->require_subcommand(1);
  auto backup = std::make_shared<StateOptions>();
  CLI::App* b = state->add_subcommand(
      "backup",
      "Copy a (running) controller's state consistently: the store, the journal up to a signed checkpoint, "
      "snapshots, cursors and connector ledgers; secrets only with --include-secrets");
  b->add_option("destination", backup->folder, "A new (or empty) folder for the backup")->required();
  b->add_option("--state", backup->state_dir, "The controller's state folder")->capture_default_str();
  b->add_flag("--include-secrets", backup->include_secrets,
              "Also copy audit/signing.key and admin.token (keep such a backup as secret as the key)");
  b->add_option("--wait", backup->wait, "How long to wait for the running controller's next signed checkpoint")
      ->capture_default_str();
  b->callback([backup, exit_code] { *exit_code = Backup(*backup); });
  auto restore = std::make_shared<StateOptions>();
  CLI::App* r = state->add_subcommand(
      "restore", "Check a backup against its manifest and copy it into a new state folder (never over one)");
  r->add_option("backup", restore->folder, "The backup folder")->required();
  r->add_option("--state", restore->state_dir, "The new state folder (must not exist, or be empty)")->required();
  r->callback([restore, exit_code] { *exit_code = Restore(*restore); });
}

}  // namespace gpufed::cli
