#include "connectors/local/job_folders.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "controller/common/bounded_read.h"

namespace gpufed::connectors::local {
namespace {

namespace fs = std::filesystem;

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

std::string ModeText(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// Creates `path` (mode `mode`, its parents as needed) and checks it: a real folder (not a
// symlink), the controller's, and under folders that no one but root or the controller's
// user can change (otherwise a folder in it could be swapped for a symlink between its
// creation and its use). `where` names it in errors (the registry names the cluster).
// An existing folder is set to `mode`, or with `refuse_other_mode` refused unless it has it.
Status PrepareControllerFolder(const std::string& path, const std::string& where, mode_t mode,
                               bool refuse_other_mode = false) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (ec) return Unavailable(where + ": create its parent: " + ec.message());
  if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST) return Unavailable(Errno(where + ": mkdir"));
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) return Unavailable(Errno(where + ": stat"));
  if (!S_ISDIR(st.st_mode)) return FailedPrecondition(where + " is not a folder (a symlink is refused too)");
  if (st.st_uid != ::geteuid()) {
    return FailedPrecondition(where + " belongs to uid " + std::to_string(st.st_uid) +
                              ", not the controller's user: only the controller may write in it");
  }
  if (refuse_other_mode && (st.st_mode & 07777) != mode) {
    return FailedPrecondition(where + " exists with mode " + ModeText(st.st_mode) +
                              "; the controller uses only a folder " + "it made or one already private to it (" +
                              ModeText(mode) + ")");
  }
  if (::chmod(path.c_str(), mode) != 0) return Unavailable(Errno(where + ": chmod"));
  for (fs::path p = fs::path(path).parent_path(); p != p.root_path(); p = p.parent_path()) {
    if (::stat(p.c_str(), &st) != 0) return Unavailable(Errno(where + ": stat " + p.string()));
    bool shared = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0;
    if (shared || (st.st_uid != 0 && st.st_uid != ::geteuid())) {
      return FailedPrecondition(where + ": the folder " + p.string() +
                                " above it can be changed by other users; choose one under folders only root or "
                                "the controller's user can write");
    }
  }
  return Status::Ok();
}

}  // namespace

Status PrepareJobRoot(const LocalSettings& s) {
  const std::string where = std::string(kJobRoot) + " " + s.job_root;  // the registry names the cluster
  GPUFED_RETURN_IF_ERROR(PrepareControllerFolder(s.job_root, where, s.user.switch_user ? 0711 : 0700));
  Result<bool> reach = CanReach(s.job_root, s.user.uid, s.user.gid);
  if (!reach.ok()) return reach.status();
  if (!*reach) {
    return FailedPrecondition(where + ": the job user " + s.user.name +
                              " cannot reach it (a folder above it is closed to that user); choose another job root");
  }
  return Status::Ok();
}

Status PrepareSharedBookkeeping(const LocalSettings& s) {
  GPUFED_RETURN_IF_ERROR(
      // Named by the repository: never re-moded, so a Cluster cannot make the controller
      // chmod a folder it did not make (it may run as root).
      PrepareControllerFolder(s.bookkeeping_dir, std::string(kBookkeepingDir) + " " + s.bookkeeping_dir, 0700,
                              /*refuse_other_mode=*/true));
  return MakeBookkeepingFolder(s.bookkeeping_dir + "/jobs");
}

Status MakeBookkeepingFolder(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Unavailable("create " + dir + ": " + ec.message());
  if (::chmod(dir.c_str(), 0700) != 0) return Unavailable(Errno("chmod " + dir));
  return Status::Ok();
}

Result<JobFolder> CreateJobFolder(const LocalSettings& s, const std::string& name, int64_t stamp) {
  UniqueFd root(::open(s.job_root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root.valid()) return Unavailable(Errno("open " + s.job_root));
  if (::mkdirat(root.get(), name.c_str(), 0700) != 0) {
    if (errno != EEXIST) return Unavailable(Errno("create " + s.job_root + "/" + name));
    const std::string aside = name + ".stale-" + std::to_string(stamp);
    if (::renameat(root.get(), name.c_str(), root.get(), aside.c_str()) != 0 ||
        ::mkdirat(root.get(), name.c_str(), 0700) != 0) {
      return Unavailable(Errno("replace " + s.job_root + "/" + name));
    }
  }
  UniqueFd dir(::openat(root.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir.valid()) return Unavailable(Errno("open " + s.job_root + "/" + name));
  JobFolder folder;
  folder.path = s.job_root + "/" + name;
  folder.output =
      UniqueFd(::openat(dir.get(), kOutputFile, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!folder.output.valid()) return Unavailable(Errno("create " + folder.path + "/" + kOutputFile));
  // Handed over last, when it holds nothing but the empty log.
  if (s.user.switch_user && (::fchown(folder.output.get(), s.user.uid, s.user.gid) != 0 ||
                             ::fchown(dir.get(), s.user.uid, s.user.gid) != 0)) {
    return Unavailable(Errno("give " + folder.path + " to " + s.user.name));
  }
  if (::fchmod(dir.get(), 0700) != 0) return Unavailable(Errno("chmod " + folder.path));
  return folder;
}

Result<std::vector<std::string>> WorkPathOf(const std::string& working_dir, const std::string& job_dir) {
  if (working_dir.size() > 4096) return InvalidArgument("run.workingDir is longer than 4096 bytes");
  if (working_dir.find('\0') != std::string::npos) return InvalidArgument("run.workingDir holds a NUL byte");
  fs::path wanted = fs::path(working_dir).lexically_normal();
  if (wanted.is_absolute()) {
    fs::path relative = wanted.lexically_relative(fs::path(job_dir).lexically_normal());
    if (relative.empty() || *relative.begin() == "..") {
      return InvalidArgument("run.workingDir " + working_dir +
                             " is outside the job's folder; on a local cluster it is relative to the job's folder "
                             "($GPUFED_JOB_DIR)");
    }
    wanted = relative;
  }
  std::vector<std::string> parts;
  for (const fs::path& part : wanted) {
    const std::string text = part.string();
    if (text.empty() || text == ".") continue;
    if (text == "..") {
      return InvalidArgument("run.workingDir " + working_dir + " leaves the job's folder");
    }
    parts.push_back(text);
  }
  return parts;
}

Status WriteSmallFile(const std::string& path, const std::string& line) {
  const std::string tmp = path + ".tmp";
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return Unavailable(Errno("create " + tmp));
  const std::string text = line + "\n";
  if (::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()) || ::fsync(fd.get()) != 0) {
    return Unavailable(Errno("write " + tmp));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) return Unavailable(Errno("rename " + tmp));
  return Status::Ok();
}

std::string ReadSmallFile(const std::string& path) {
  // Bounded before it is read: a job's folder may hold what its job wrote.
  Result<std::string> text = ReadFileBounded(path, 4096);
  if (!text.ok()) return "";
  std::string line = text->substr(0, text->find('\n'));
  return line.size() > 256 ? std::string() : line;
}

std::string SafeName(const std::string& key) {
  std::string out;
  for (char c : key) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  if (!out.empty() && out[0] == '.') out[0] = '_';
  return out;
}

}  // namespace gpufed::connectors::local
