#include "controller/common/secure_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

namespace gpufed {
namespace {

constexpr mode_t kPermissionBits = 07777;
constexpr mode_t kGroupOrOthers = 077;
constexpr mode_t kReadOrWriteByGroupOrOthers = S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH;

std::string Octal(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & kPermissionBits));
  return buf;
}

Status SystemError(const std::string& what, const std::string& path, int err) {
  std::string message = what + " " + path + ": " + std::strerror(err);
  switch (err) {
    case ENOENT:
      return NotFound(message);
    case EEXIST:
      return {StatusCode::kAlreadyExists, message};
    case EACCES:
    case EPERM:
    case EROFS:
      return {StatusCode::kPermissionDenied, message};
    case ENOSPC:
    case EDQUOT:
      return ResourceExhausted(message);
    default:
      return Unavailable(message);
  }
}

// "group", "others" or "group and others": who holds any of `bits` in `mode`.
std::string Holders(mode_t mode, mode_t group_bits, mode_t other_bits) {
  const bool group = (mode & group_bits) != 0, others = (mode & other_bits) != 0;
  return group && others ? "group and others" : group ? "group" : "others";
}

// "readable by others", "readable and writable by group and others", ...
std::string LooseAccess(mode_t mode) {
  const bool read = (mode & (S_IRGRP | S_IROTH)) != 0, write = (mode & (S_IWGRP | S_IWOTH)) != 0;
  if (read && write) {
    return "readable by " + Holders(mode, S_IRGRP, S_IROTH) + " and writable by " + Holders(mode, S_IWGRP, S_IWOTH);
  }
  if (read) return "readable by " + Holders(mode, S_IRGRP, S_IROTH);
  if (write) return "writable by " + Holders(mode, S_IWGRP, S_IWOTH);
  return "accessible by " + Holders(mode, S_IRWXG, S_IRWXO);
}

// Files and folders may belong to this user, or to root (who can read them anyway).
Status CheckOwner(const std::string& path, const struct stat& st, bool allow_root) {
  const uid_t me = ::geteuid();
  if (st.st_uid == me || (allow_root && st.st_uid == 0)) return Status::Ok();
  return FailedPrecondition(path + " is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
                            std::to_string(me) + "): chown it, or run gpufed as its owner");
}

Status CheckRegular(const std::string& path, const struct stat& st) {
  if (S_ISLNK(st.st_mode)) {
    return FailedPrecondition(path + " is a symbolic link; gpufed does not follow links for this file: put the file "
                                     "itself there");
  }
  if (!S_ISREG(st.st_mode)) return FailedPrecondition(path + " is not a regular file");
  return Status::Ok();
}

// Permissions an existing file or folder keeps once group and others lose theirs.
mode_t Narrowed(mode_t mode) { return mode & kPermissionBits & ~kGroupOrOthers; }

// mkdir -p with mode 0700 for the missing components; existing ones are left as they are.
// Each level strips one component, so the depth is bounded by the path's length.
Status CreateMissingFolders(const std::filesystem::path& path) {
  if (::mkdir(path.c_str(), 0700) == 0) return Status::Ok();
  int err = errno;
  if (err == EEXIST) return Status::Ok();
  if (err == ENOENT && path.has_parent_path() && path.parent_path() != path) {
    GPUFED_RETURN_IF_ERROR(CreateMissingFolders(path.parent_path()));
    if (::mkdir(path.c_str(), 0700) == 0 || errno == EEXIST) return Status::Ok();
    err = errno;
  }
  return SystemError("create folder", path.string(), err);
}

bool IsFilesystemRoot(const struct stat& st) {
  struct stat root;
  return ::stat("/", &root) == 0 && root.st_dev == st.st_dev && root.st_ino == st.st_ino;
}

// Checks an opened file; narrows a loose mode (kNarrow) or refuses it (kRefuse).
Status CheckOpenedFile(int fd, const std::string& path, LooseFile loose, std::optional<ModeChange>* narrowed) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return SystemError("stat", path, errno);
  GPUFED_RETURN_IF_ERROR(CheckRegular(path, st));
  GPUFED_RETURN_IF_ERROR(CheckOwner(path, st, /*allow_root=*/true));
  if (loose == LooseFile::kRefuse) {
    if ((st.st_mode & kReadOrWriteByGroupOrOthers) == 0) return Status::Ok();
    return FailedPrecondition(path + " is " + LooseAccess(st.st_mode) + " (mode " + Octal(st.st_mode) +
                              "): chmod 600 it (and replace the secret if others may have read it)");
  }
  if ((st.st_mode & kGroupOrOthers) == 0) return Status::Ok();
  const mode_t to = Narrowed(st.st_mode);
  if (::fchmod(fd, to) != 0) return SystemError("chmod " + Octal(to), path, errno);
  if (narrowed != nullptr) *narrowed = ModeChange{path, st.st_mode & kPermissionBits, to};
  return Status::Ok();
}

Status WriteAll(int fd, const std::string& path, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SystemError("write", path, errno);
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status SyncFolderOf(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return SystemError("open", dir, errno);
  if (::fsync(fd.get()) != 0) return SystemError("fsync", dir, errno);
  return Status::Ok();
}

// Removes the temporary file unless it was renamed away.
class TempFileGuard {
 public:
  explicit TempFileGuard(std::string path) : path_(std::move(path)) {}
  ~TempFileGuard() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  TempFileGuard(const TempFileGuard&) = delete;
  TempFileGuard& operator=(const TempFileGuard&) = delete;
  const std::string& path() const { return path_; }
  void Renamed() { path_.clear(); }

 private:
  std::string path_;
};

Status WriteSecretFile(const std::string& path, std::string_view content, bool replace) {
  std::string name = path + ".tmp-XXXXXX";
  std::vector<char> tmpl(name.begin(), name.end());
  tmpl.push_back('\0');
  UniqueFd fd(::mkostemp(tmpl.data(), O_CLOEXEC));  // O_EXCL, mode 0600 less the umask
  if (!fd.valid()) return SystemError("create", name, errno);
  TempFileGuard tmp(tmpl.data());
  // A umask may have taken the owner's bits too; the secret is exactly 0600.
  if (::fchmod(fd.get(), 0600) != 0) return SystemError("chmod 0600", tmp.path(), errno);
  GPUFED_RETURN_IF_ERROR(WriteAll(fd.get(), tmp.path(), content));
  if (::fsync(fd.get()) != 0) return SystemError("fsync", tmp.path(), errno);
  if (::close(fd.release()) != 0) return SystemError("close", tmp.path(), errno);
  if (replace) {
    if (::rename(tmp.path().c_str(), path.c_str()) != 0) return SystemError("rename to " + path, tmp.path(), errno);
    tmp.Renamed();
  } else if (::link(tmp.path().c_str(), path.c_str()) != 0) {
    // link(2) never replaces: an existing `path`, even a dangling symlink, is EEXIST.
    const int err = errno;
    if (err == EEXIST) return {StatusCode::kAlreadyExists, path + " exists; not replacing it"};
    return SystemError("create", path, err);
  }
  return SyncFolderOf(path);
}

}  // namespace

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

int UniqueFd::release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

std::string ModeChange::ToString() const {
  return path + " was accessible by group or others (mode " + Octal(from) + "); narrowed to " + Octal(to);
}

Result<std::optional<ModeChange>> MakePrivateFolder(const std::string& path, ExistingFolder existing) {
  if (path.empty()) return InvalidArgument("a folder path is empty");
  struct stat before;
  const bool existed = ::stat(path.c_str(), &before) == 0;
  if (!existed) GPUFED_RETURN_IF_ERROR(CreateMissingFolders(path));
  // Checked and changed through a descriptor, so a folder swapped in between is not touched.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOTDIR) return FailedPrecondition(path + " is not a folder");
    return SystemError("open folder", path, errno);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return SystemError("stat", path, errno);
  const mode_t mode = st.st_mode & kPermissionBits;
  if (!existed) {
    // Ours from creation; a umask may have taken more than group and others' bits.
    if (mode != 0700 && st.st_uid == ::geteuid() && ::fchmod(fd.get(), 0700) != 0) {
      return SystemError("chmod 0700", path, errno);
    }
    return std::optional<ModeChange>();
  }
  if (existing == ExistingFolder::kLeave) return std::optional<ModeChange>();
  GPUFED_RETURN_IF_ERROR(CheckOwner(path, st, /*allow_root=*/false));
  if ((mode & kGroupOrOthers) == 0) return std::optional<ModeChange>();
  if ((mode & S_ISVTX) != 0 || IsFilesystemRoot(st)) {
    return FailedPrecondition(path + " is shared by design (mode " + Octal(mode) +
                              "); give gpufed a folder of its own inside it");
  }
  const mode_t to = Narrowed(mode);
  if (::fchmod(fd.get(), to) != 0) return SystemError("chmod " + Octal(to), path, errno);
  return std::optional<ModeChange>(ModeChange{path, mode, to});
}

Result<UniqueFd> CreatePrivateFile(const std::string& path, int access_flags) {
  UniqueFd fd(::open(path.c_str(), access_flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    const int err = errno;
    if (err == EEXIST) return Status(StatusCode::kAlreadyExists, path + " exists");
    return SystemError("create", path, err);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return SystemError("stat", path, errno);
  if ((st.st_mode & kPermissionBits) != 0600 && ::fchmod(fd.get(), 0600) != 0) {
    return SystemError("chmod 0600", path, errno);
  }
  return fd;
}

Result<UniqueFd> OpenPrivateFile(const std::string& path, int access_flags, LooseFile loose,
                                 std::optional<ModeChange>* narrowed) {
  // O_NONBLOCK: a FIFO planted at `path` must not block the open; it is refused below.
  UniqueFd fd(::open(path.c_str(), access_flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!fd.valid()) {
    const int err = errno;
    struct stat st;
    if (err == ELOOP && ::lstat(path.c_str(), &st) == 0) GPUFED_RETURN_IF_ERROR(CheckRegular(path, st));
    return SystemError("open", path, err);
  }
  GPUFED_RETURN_IF_ERROR(CheckOpenedFile(fd.get(), path, loose, narrowed));
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) return SystemError("fcntl", path, errno);
  return fd;
}

Result<UniqueFd> OpenOrCreatePrivateFile(const std::string& path, int access_flags,
                                         std::optional<ModeChange>* narrowed) {
  Result<UniqueFd> created = CreatePrivateFile(path, access_flags);
  if (created.ok() || created.status().code() != StatusCode::kAlreadyExists) return created;
  return OpenPrivateFile(path, access_flags, LooseFile::kNarrow, narrowed);
}

Result<std::optional<ModeChange>> NarrowFileByName(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return SystemError("stat", path, errno);
  GPUFED_RETURN_IF_ERROR(CheckRegular(path, st));
  GPUFED_RETURN_IF_ERROR(CheckOwner(path, st, /*allow_root=*/true));
  if ((st.st_mode & kGroupOrOthers) == 0) return std::optional<ModeChange>();
  // By name (see the header); the callers' folder is private, so nobody else can swap
  // the file between lstat and chmod.
  const mode_t to = Narrowed(st.st_mode);
  if (::chmod(path.c_str(), to) != 0) return SystemError("chmod " + Octal(to), path, errno);
  return std::optional<ModeChange>(ModeChange{path, st.st_mode & kPermissionBits, to});
}

Result<std::string> ReadSecretFile(const std::string& path, size_t max_bytes) {
  Result<UniqueFd> fd = OpenPrivateFile(path, O_RDONLY, LooseFile::kRefuse);
  if (!fd.ok()) return fd.status();
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd->get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return SystemError("read", path, errno);
    if (n == 0) return out;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      return ResourceExhausted(path + " is larger than " + std::to_string(max_bytes) + " bytes");
    }
    out.append(buf, static_cast<size_t>(n));
  }
}

Status CreateSecretFile(const std::string& path, std::string_view content) {
  return WriteSecretFile(path, content, /*replace=*/false);
}

Status ReplaceSecretFile(const std::string& path, std::string_view content) {
  return WriteSecretFile(path, content, /*replace=*/true);
}

}  // namespace gpufed
