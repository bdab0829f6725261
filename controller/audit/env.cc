#include "controller/audit/env.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

namespace gpufed::audit {
namespace {

Status IoError(const std::string& what, const std::string& path, int err) {
  std::string message = what + " " + path + ": " + std::strerror(err);
  if (err == ENOSPC || err == EDQUOT) return ResourceExhausted(message);
  if (err == ENOENT) return NotFound(message);
  if (err == EACCES || err == EPERM || err == EROFS) return {StatusCode::kPermissionDenied, message};
  return {StatusCode::kInternal, message};
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }

  Status Append(std::string_view data) override {
    while (!data.empty()) {
      ssize_t n = ::write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return IoError("write", path_, errno);
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return Status::Ok();
  }
  Status Sync() override {
    if (::fdatasync(fd_) != 0) return IoError("fdatasync", path_, errno);
    return Status::Ok();
  }
  Status Close() override {
    if (fd_ < 0) return Status::Ok();
    int rc = ::close(fd_);
    fd_ = -1;
    if (rc != 0) return IoError("close", path_, errno);
    return Status::Ok();
  }

 private:
  std::string path_;
  int fd_;
};

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  Result<size_t> Read(char* buf, size_t n) override {
    for (;;) {
      ssize_t r = ::read(fd_, buf, n);
      if (r >= 0) return static_cast<size_t>(r);
      if (errno != EINTR) return IoError("read", path_, errno);
    }
  }
  Status Seek(uint64_t offset) override {
    if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0) return IoError("seek", path_, errno);
    return Status::Ok();
  }

 private:
  std::string path_;
  int fd_;
};

class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }

 private:
  int fd_;
};

class PosixEnv final : public Env {
 public:
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool truncate) override {
    int flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0);
    int fd = ::open(path.c_str(), flags | O_NOFOLLOW, 0600);  // journal segments, packs: private
    if (fd < 0) return IoError("open", path, errno);
    return std::unique_ptr<WritableFile>(new PosixWritableFile(path, fd));
  }
  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return IoError("open", path, errno);
    return std::unique_ptr<SequentialFile>(new PosixSequentialFile(path, fd));
  }
  Result<std::string> ReadFile(const std::string& path) override {
    Result<std::unique_ptr<SequentialFile>> file = NewSequentialFile(path);
    if (!file.ok()) return file.status();
    std::string out;
    char buf[1 << 16];
    for (;;) {
      Result<size_t> n = (*file)->Read(buf, sizeof buf);
      if (!n.ok()) return n.status();
      if (*n == 0) return out;
      out.append(buf, *n);
    }
  }
  Result<uint64_t> FileSize(const std::string& path) override {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return IoError("stat", path, errno);
    return static_cast<uint64_t>(st.st_size);
  }
  bool FileExists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }
  Result<std::vector<std::string>> ListDir(const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return IoError("opendir", dir, errno);
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    ::closedir(d);
    return names;
  }
  Status CreateDirs(const std::string& dir) override {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return IoError("mkdir", dir, ec.value());
    return Status::Ok();
  }
  Status SyncDir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return IoError("open", dir, errno);
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) return IoError("fsync", dir, err);
    return Status::Ok();
  }
  Status Truncate(const std::string& path, uint64_t size) override {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return IoError("open", path, errno);
    int rc = ::ftruncate(fd, static_cast<off_t>(size));
    if (rc == 0) rc = ::fdatasync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) return IoError("truncate", path, err);
    return Status::Ok();
  }
  Status Rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return IoError("rename", from, errno);
    return Status::Ok();
  }
  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return IoError("unlink", path, errno);
    return Status::Ok();
  }
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) override {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return IoError("open", path, errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK) return FailedPrecondition(path + " is locked by another journal writer");
      return IoError("flock", path, err);
    }
    return std::unique_ptr<FileLock>(new PosixFileLock(fd));
  }
  int64_t NowMicros() override {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  void SleepMicros(int64_t micros) override { std::this_thread::sleep_for(std::chrono::microseconds(micros)); }
};

}  // namespace

std::unique_ptr<Env> NewPosixEnv() { return std::make_unique<PosixEnv>(); }

namespace {

class UnsyncedFile final : public WritableFile {
 public:
  explicit UnsyncedFile(std::unique_ptr<WritableFile> base) : base_(std::move(base)) {}
  Status Append(std::string_view data) override { return base_->Append(data); }
  Status Sync() override { return Status::Ok(); }
  Status Close() override { return base_->Close(); }

 private:
  std::unique_ptr<WritableFile> base_;
};

class UnsyncedEnv final : public EnvWrapper {
 public:
  explicit UnsyncedEnv(Env* base) : EnvWrapper(base) {}
  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool truncate) override {
    Result<std::unique_ptr<WritableFile>> file = base()->NewWritableFile(path, truncate);
    if (!file.ok()) return file.status();
    return std::unique_ptr<WritableFile>(new UnsyncedFile(std::move(file).value()));
  }
  Status SyncDir(const std::string&) override { return Status::Ok(); }
};

}  // namespace

std::unique_ptr<Env> NewUnsyncedEnv(Env* base) { return std::make_unique<UnsyncedEnv>(base); }

Status WriteFileAtomic(Env& env, const std::string& path, std::string_view data) {
  std::string tmp = path + ".tmp";
  Result<std::unique_ptr<WritableFile>> file = env.NewWritableFile(tmp, /*truncate=*/true);
  if (!file.ok()) return file.status();
  GPUFED_RETURN_IF_ERROR((*file)->Append(data));
  GPUFED_RETURN_IF_ERROR((*file)->Sync());
  GPUFED_RETURN_IF_ERROR((*file)->Close());
  GPUFED_RETURN_IF_ERROR(env.Rename(tmp, path));
  std::string dir = std::filesystem::path(path).parent_path().string();
  return env.SyncDir(dir.empty() ? "." : dir);
}

}  // namespace gpufed::audit
