#pragma once
// Files and folders that hold secrets or the controller's state (issue 42). The state
// folder holds every submitted spec's run.env, the audit signing key and the admin token,
// so it and what gpufed creates in it are private to the user gpufed runs as:
//
//   - folders are created 0700; an existing state folder that group or others can enter
//     is narrowed to 0700 (operators expect a folder we own to be fixed, not refused) and
//     the change is returned so the caller can say so; a folder owned by another user,
//     "/" and sticky folders such as /tmp (shared by design) are refused instead;
//   - files are created 0600 from their creation (O_CREAT|O_EXCL|O_NOFOLLOW), so there is
//     no moment when they are readable by others and no process-wide umask to toggle;
//   - secrets (signing keys, token files, admin.token) are opened without following a
//     symlink and checked on the opened descriptor: a regular file, owned by this user or
//     root, neither readable nor writable by group or others. A secret that others could
//     read may already be copied, so it is refused (the operator rotates or chmods it),
//     never silently narrowed.
//
// Only the last component of a path is protected from symlinks (O_NOFOLLOW); the folders
// above it are the operator's choice. Every error names the path and the fix.
#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "controller/common/status.h"

namespace gpufed {

// An open file descriptor, closed when destroyed. Move-only.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd();
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Gives up ownership: the caller closes the descriptor.
  int release();

 private:
  int fd_ = -1;
};

// Permission bits of an existing file or folder that were narrowed, for the caller to
// report (never contains a secret).
struct ModeChange {
  std::string path;
  mode_t from = 0;
  mode_t to = 0;
  // "<path> was accessible by group or others (mode 0755); narrowed to 0700"
  std::string ToString() const;
};

// What to do with an existing folder that group or others can enter.
enum class ExistingFolder {
  kNarrow,  // the folder is gpufed's (state folder and its subfolders): narrow to 0700
  kLeave,   // a folder the operator named for other things too (keygen --out): leave it
};

// Creates `path` and its missing parents with mode 0700. An existing `path` (a symlink to
// a folder is followed) must be a folder owned by this user; with kNarrow, one that group
// or others can access is narrowed to 0700 and the change returned. FailedPrecondition
// for a folder owned by another user, a non-folder, and (kNarrow) "/" or a sticky folder;
// PermissionDenied or Unavailable when the system refuses.
Result<std::optional<ModeChange>> MakePrivateFolder(const std::string& path,
                                                    ExistingFolder existing = ExistingFolder::kNarrow);

// Creates a new file with mode 0600 (O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, plus
// `access_flags`, e.g. O_WRONLY|O_APPEND). AlreadyExists when anything, a symlink
// included, is at `path`.
Result<UniqueFd> CreatePrivateFile(const std::string& path, int access_flags);

// What to do with an existing file that group or others can read or write.
enum class LooseFile {
  kRefuse,  // a secret: FailedPrecondition "<path> is readable by others (mode 0644): chmod 600 it"
  kNarrow,  // state data written by an older gpufed (store, ledgers): narrow it to 0600
};

// Opens an existing file without following a symlink (O_NOFOLLOW|O_CLOEXEC, plus
// `access_flags`) and checks the opened descriptor: a regular file, owned by this user or
// root, no access for group or others (handled per `loose`; a narrowing is stored in
// `*narrowed` when given). NotFound when missing; FailedPrecondition for a symlink, a
// non-regular file, another owner or (kRefuse) a loose mode.
Result<UniqueFd> OpenPrivateFile(const std::string& path, int access_flags, LooseFile loose,
                                 std::optional<ModeChange>* narrowed = nullptr);

// OpenPrivateFile(path, access_flags, kNarrow), creating `path` with CreatePrivateFile
// when it is missing.
Result<UniqueFd> OpenOrCreatePrivateFile(const std::string& path, int access_flags,
                                         std::optional<ModeChange>* narrowed = nullptr);

// The same checks as OpenPrivateFile(kNarrow) for a file that other code opens by name
// (SQLite's database, -wal and -shm), without opening it: closing a descriptor of a file
// drops every fcntl lock this process holds on it, and SQLite's locks are fcntl locks.
// Checks lstat(2); returns the narrowing, if one was needed. NotFound when missing.
Result<std::optional<ModeChange>> NarrowFileByName(const std::string& path);

// Bytes a secret file may hold unless the caller says otherwise (a PEM key is ~120).
inline constexpr size_t kMaxSecretFileBytes = 64 * 1024;

// Reads a secret: OpenPrivateFile(path, O_RDONLY, kRefuse), then at most `max_bytes`
// (ResourceExhausted beyond). NotFound when missing.
Result<std::string> ReadSecretFile(const std::string& path, size_t max_bytes = kMaxSecretFileBytes);

// Writes a new secret file so that `path` either does not exist or holds all of
// `content`, mode 0600, on stable storage: a temporary file "<path>.tmp-XXXXXX" (mkostemp:
// O_EXCL, 0600) is written and fsync'd, then hard-linked to `path` and the folder synced.
// AlreadyExists when `path` exists (nothing is replaced). The folder must exist.
Status CreateSecretFile(const std::string& path, std::string_view content);

// As CreateSecretFile, but an existing `path` is replaced (renamed over: a symlink at
// `path` is replaced, not followed).
Status ReplaceSecretFile(const std::string& path, std::string_view content);

}  // namespace gpufed
