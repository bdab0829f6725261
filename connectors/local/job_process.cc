#include "connectors/local/job_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gpufed::connectors::local {
namespace {

// Exit statuses of a job that never reached its command (shell conventions).
constexpr int kCannotStart = 127;   // credentials, fork, or the command was not found
constexpr int kCannotEnter = 126;   // working folder, or the file is not executable

// ---- Async-signal-safe helpers: used between fork and exec, and in the wrapper. ----

// Closes every descriptor from 3 up, except `keep_a` and `keep_b` (-1: none).
void CloseAllExcept(int keep_a, int keep_b) {
  if (keep_a > keep_b) std::swap(keep_a, keep_b);
  unsigned int from = 3;
  for (int keep : {keep_a, keep_b}) {
    if (keep < 3) continue;
    if (static_cast<unsigned int>(keep) > from) ::syscall(SYS_close_range, from, keep - 1, 0);
    from = static_cast<unsigned int>(keep) + 1;
  }
  ::syscall(SYS_close_range, from, ~0U, 0);
}

// Every catchable signal back to its default action, none blocked: the job must not
// inherit the controller's ignored SIGPIPE or its blocked stop signals.
void ResetSignals() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);  // EINVAL for libc's own: fine
  }
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

void WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

// "<code>\n" into <bookkeeping>/exit, atomically (temporary file, then rename).
void WriteExitStatus(int dir, int code) {
  char text[16];
  auto [end, ec] = std::to_chars(text, text + sizeof text - 1, code);
  if (ec != std::errc()) return;
  *end++ = '\n';
  int fd = ::openat(dir, "exit.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  WriteAll(fd, text, static_cast<size_t>(end - text));
  ::fsync(fd);
  ::close(fd);
  if (::renameat(dir, "exit.tmp", dir, "exit") == 0) ::fsync(dir);
}

// Everything the two children need, as plain pointers into the parent's memory.
struct ChildPlan {
  const char* executable;
  char* const* argv;
  char* const* envp;
  const char* job_dir;
  const char* const* work_path;  // null-terminated
  bool switch_user;
  uid_t uid;
  gid_t gid;
  int bookkeeping_dir;
  int output;
  int devnull;
  int ready;                     // the wrapper writes one byte here once it leads its session
};

// The job: drop to the job user (raw syscalls, so nothing of libc's thread machinery
// runs), enter its folder as that user (so no symlink in it can take a privileged
// process elsewhere), and exec the command.
[[noreturn]] void RunJob(const ChildPlan& p) {
  ::close(p.bookkeeping_dir);
  ResetSignals();
  if (p.switch_user) {
    gid_t groups[1] = {p.gid};
    if (::syscall(SYS_setgroups, 1, groups) != 0) ::_exit(kCannotStart);
    if (::syscall(SYS_setresgid, p.gid, p.gid, p.gid) != 0) ::_exit(kCannotStart);
    if (::syscall(SYS_setresuid, p.uid, p.uid, p.uid) != 0) ::_exit(kCannotStart);
    // Belt and braces: the switch is permanent, or the job does not run.
    if (::getuid() != p.uid || ::geteuid() != p.uid || ::getgid() != p.gid) ::_exit(kCannotStart);
    if (::syscall(SYS_setresuid, 0, 0, 0) == 0) ::_exit(kCannotStart);
  }
  ::umask(077);
  if (::chdir(p.job_dir) != 0) ::_exit(kCannotEnter);
  for (const char* const* part = p.work_path; *part != nullptr; ++part) {
    if (::mkdir(*part, 0700) != 0 && errno != EEXIST) ::_exit(kCannotEnter);
    if (::chdir(*part) != 0) ::_exit(kCannotEnter);
  }
  if (p.executable[0] == '\0') ::_exit(kCannotStart);
  ::execve(p.executable, p.argv, p.envp);
  ::_exit(errno == ENOENT ? kCannotStart : kCannotEnter);
}

// The wrapper: leads the job's session, waits for the job, records how it ended where
// only the controller's user can write, then ends whatever the job left in its group
// (itself included) so that a finished job holds no GPU.
[[noreturn]] void RunWrapper(const ChildPlan& p) {
  if (::setsid() < 0) ::_exit(kCannotStart);
  ::prctl(PR_SET_NAME, "gpufed-job", 0, 0, 0);
  ResetSignals();
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  // Cancel signals the group: the job gets SIGTERM, the wrapper lives on to record it.
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) ::sigaction(sig, &ignore, nullptr);
  if (p.devnull >= 0) ::dup2(p.devnull, 0);
  ::dup2(p.output, 1);
  ::dup2(p.output, 2);
  CloseAllExcept(p.bookkeeping_dir, p.ready);
  WriteAll(p.ready, "k", 1);
  ::close(p.ready);
  pid_t job = ::_Fork();
  if (job == 0) RunJob(p);
  int code = kCannotStart;
  if (job > 0) {
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(job, &status, 0);
    } while (r < 0 && errno == EINTR);
    if (r == job) code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : code;
  }
  WriteExitStatus(p.bookkeeping_dir, code);
  ::kill(0, SIGKILL);
  ::_exit(code);
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct StatFields {
  char state = '?';
  uint64_t start_ticks = 0;
};

std::optional<StatFields> ReadStat(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  size_t paren = text.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(text.substr(paren + 1));
  StatFields out;
  std::string skip;
  fields >> out.state;
  for (int i = 0; i < 18; ++i) fields >> skip;  // ppid .. itrealvalue
  fields >> out.start_ticks;                    // field 22
  if (!fields) return std::nullopt;
  return out;
}

std::string BootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

}  // namespace

std::string ProcessIdentity::ToString() const {
  return std::to_string(pid) + " " + std::to_string(start_ticks) + " " + boot_id;
}

std::optional<ProcessIdentity> ProcessIdentity::Parse(const std::string& text) {
  std::istringstream in(text);
  ProcessIdentity id;
  if (!(in >> id.pid >> id.start_ticks >> id.boot_id) || id.pid <= 0 || id.start_ticks == 0) return std::nullopt;
  return id;
}

Result<ProcessIdentity> IdentityOf(int pid) {
  std::optional<StatFields> stat = ReadStat(pid);
  if (!stat) return NotFound("no process " + std::to_string(pid));
  return ProcessIdentity{pid, stat->start_ticks, BootId()};
}

bool IsRunning(const ProcessIdentity& id) {
  if (id.pid <= 0 || id.boot_id != BootId()) return false;
  std::optional<StatFields> stat = ReadStat(id.pid);
  return stat && stat->start_ticks == id.start_ticks && stat->state != 'Z' && stat->state != 'X';
}

std::string ResolveExecutable(const std::string& command, const std::string& path_list) {
  if (command.empty()) return "";
  if (command.find('/') != std::string::npos) return command;
  std::istringstream dirs(path_list);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty() || dir[0] != '/') continue;  // relative PATH entries would follow the job's folder
    std::string candidate = dir + "/" + command;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111) != 0) return candidate;
  }
  return "";
}

Result<int> LaunchJob(const JobLaunch& launch) {
  std::vector<std::string> argv = launch.argv, env = launch.env, work = launch.work_path;
  std::vector<char*> c_argv = CStrings(argv), c_env = CStrings(env), c_work = CStrings(work);
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return Unavailable(std::string("pipe: ") + std::strerror(errno));
  UniqueFd ready_read(pipe_fds[0]), ready_write(pipe_fds[1]);
  UniqueFd devnull(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  ChildPlan plan{launch.executable.c_str(), c_argv.data(), c_env.data(), launch.job_dir.c_str(), c_work.data(),
                 launch.user.switch_user, launch.user.uid, launch.user.gid, launch.bookkeeping_dir, launch.output,
                 devnull.get(), ready_write.get()};
  pid_t pid = ::fork();
  if (pid < 0) return Unavailable(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) RunWrapper(plan);
  ready_write = UniqueFd();
  char byte = 0;
  ssize_t n;
  do {
    n = ::read(ready_read.get(), &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n != 1) {  // the wrapper died before leading its session
    ::waitpid(pid, nullptr, 0);
    return Unavailable("the job wrapper could not start a session");
  }
  return static_cast<int>(pid);
}

}  // namespace gpufed::connectors::local
