#pragma once
// Starting a job as its own user, and knowing later that a pid is still that job.
//
// The controller forks a wrapper; the wrapper (still the controller's user, in a new
// session whose process group id is its pid) forks the job, which drops to the job user
// (setgroups, setgid, setuid, each checked) and execs the command with exactly the
// environment it is given. The wrapper waits for the job, writes the exit status into
// the controller's bookkeeping folder (which the job user cannot write), ends what the
// job left in its process group, and exits. Between fork and exec (and in the wrapper,
// which never execs) only async-signal-safe calls are made: everything the children need
// is prepared here first, in memory the parent owns until the fork.
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "connectors/local/local_settings.h"
#include "controller/common/secure_file.h"
#include "controller/common/status.h"

namespace gpufed::connectors::local {

// What makes a pid this connector's wrapper and not a recycled number: the kernel's start
// time of the process (clock ticks since boot, /proc/<pid>/stat field 22) and the boot.
struct ProcessIdentity {
  int pid = 0;
  uint64_t start_ticks = 0;
  std::string boot_id;
  // "<pid> <start_ticks> <boot_id>"
  std::string ToString() const;
  static std::optional<ProcessIdentity> Parse(const std::string& text);
};

// The identity of a process that exists now (a zombie too). NotFound when it does not.
Result<ProcessIdentity> IdentityOf(int pid);

// True when `id` names a process that runs now (not a zombie) and is the same process
// that was recorded: same pid, start time and boot.
bool IsRunning(const ProcessIdentity& id);

struct JobLaunch {
  std::string executable;              // resolved path; empty: not found (the job exits 127)
  std::vector<std::string> argv;       // argv[0] as written in run.command
  std::vector<std::string> env;        // "NAME=value", the whole environment
  std::string job_dir;                 // the job's folder (owned by the job user)
  std::vector<std::string> work_path;  // folders under job_dir to create and enter, in order
  JobUser user;
  int bookkeeping_dir = -1;            // controller-owned folder: the wrapper writes "exit" here
  int output = -1;                     // the job's stdout and stderr
};

// Forks the wrapper and returns its pid once it leads its own session (so signalling
// the group -pid reaches the job from then on). The wrapper is this process's child:
// reap it with waitpid. Unavailable when fork or the session fails.
Result<int> LaunchJob(const JobLaunch& launch);

// Finds `command` the way a shell would, on the PATH in `env` (or the fixed PATH):
// a name with a slash is returned as is. Empty when no executable file matches.
std::string ResolveExecutable(const std::string& command, const std::string& path_list);

}  // namespace gpufed::connectors::local
