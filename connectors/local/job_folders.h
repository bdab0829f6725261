#pragma once
// The two folders of a job (README.md, "Folders"):
//   - the job folder, <job root>/<key>: the job's working folder, created by the
//     controller (0700) and handed to the job user before the job starts; the job's
//     output goes to gpufed-output.log in it. The controller opens nothing in it after
//     that: the job may put symlinks there.
//   - the bookkeeping folder, <bookkeeping dir>/jobs/<key> (the connector's state folder
//     unless local.gpufed.io/bookkeeping-dir names one): the controller's record of
//     the job (launching, process, pid, started_ms) and the wrapper's exit status (exit),
//     0700 and the controller's user's; the job cannot write, or even enter, it.
#include <string>
#include <vector>

#include "connectors/local/job_process.h"
#include "connectors/local/local_settings.h"
#include "controller/common/status.h"

namespace gpufed::connectors::local {

inline constexpr const char* kOutputFile = "gpufed-output.log";

// Creates the job root if missing (mode 0711 when jobs run as another user: they pass
// through it to their own folder but cannot list it; else 0700) and checks it: a real
// folder (not a symlink), the controller's, writable by no one else, and reachable by the
// job user. FailedPrecondition naming the folder and the annotation otherwise.
Status PrepareJobRoot(const LocalSettings& settings);

// Creates a bookkeeping-dir named by the Cluster (LocalSettings::bookkeeping_dir, shared
// by replicas) and its jobs/ folder, and checks it as the job root is checked: a real
// folder, the controller's, 0700, under folders only root or the controller can change.
Status PrepareSharedBookkeeping(const LocalSettings& settings);

// Creates the bookkeeping folder `dir` (0700) and its parents. Unavailable on failure.
Status MakeBookkeepingFolder(const std::string& dir);

struct JobFolder {
  std::string path;
  UniqueFd output;   // gpufed-output.log, opened for appending
};

// Creates <job_root>/<name> afresh for the job user (a folder already there, left by an
// older connector, is renamed aside to "<name>.stale-<stamp>" rather than reused: a job
// of the same user could have planted symlinks in it). Unavailable on failure.
Result<JobFolder> CreateJobFolder(const LocalSettings& settings, const std::string& name, int64_t stamp);

// The folders under the job folder that run.workingDir names, in order: a relative path
// ("data/run1"), or an absolute one inside the job folder. InvalidArgument for ".."
// that leaves the job folder, and for absolute paths elsewhere.
Result<std::vector<std::string>> WorkPathOf(const std::string& working_dir, const std::string& job_dir);

// Small bookkeeping files: written whole (temporary file, fsync, rename), read as one line.
Status WriteSmallFile(const std::string& path, const std::string& line);
std::string ReadSmallFile(const std::string& path);

// A file name for an action key: letters, digits, '-' and '.' kept, the rest '_', and
// never starting with '.'.
std::string SafeName(const std::string& key);

}  // namespace gpufed::connectors::local
