#pragma once
// All operating-system access of the audit module: files, directories, locks, the wall
// clock and sleeping. Production code uses NewPosixEnv(); tests wrap it to inject a full
// disk, a failing fdatasync or virtual time (see audit/testing/fault_env.h).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "controller/common/status.h"

namespace gpufed::audit {

// A file opened for appending. Not thread-safe; one owner at a time.
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  // Appends all of `data` or returns an error (ENOSPC becomes ResourceExhausted). After an
  // error the file's length is unknown: the owner must stop using it.
  virtual Status Append(std::string_view data) = 0;
  // fdatasync(2): returns when every appended byte is on stable storage.
  virtual Status Sync() = 0;
  virtual Status Close() = 0;
};

// A file read from the start, in order.
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  // Reads up to `n` bytes into `buf`; 0 at end of file (more may appear later).
  virtual Result<size_t> Read(char* buf, size_t n) = 0;
  virtual Status Seek(uint64_t offset) = 0;
};

// Held while a directory is owned by one process (flock); released on destruction.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

class Env {
 public:
  virtual ~Env() = default;

  // Opens `path` for appending, creating it if missing. `truncate` empties it first.
  virtual Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool truncate) = 0;
  virtual Result<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& path) = 0;
  // NotFound when the file does not exist.
  virtual Result<std::string> ReadFile(const std::string& path) = 0;
  virtual Result<uint64_t> FileSize(const std::string& path) = 0;
  virtual bool FileExists(const std::string& path) = 0;
  // Names (not paths) of the entries of `dir`, unsorted.
  virtual Result<std::vector<std::string>> ListDir(const std::string& dir) = 0;
  virtual Status CreateDirs(const std::string& dir) = 0;
  // Makes creations, renames and removals in `dir` durable.
  virtual Status SyncDir(const std::string& dir) = 0;
  // Shrinks `path` to `size` bytes and syncs it.
  virtual Status Truncate(const std::string& path, uint64_t size) = 0;
  virtual Status Rename(const std::string& from, const std::string& to) = 0;
  virtual Status RemoveFile(const std::string& path) = 0;
  // An exclusive advisory lock on `path` (created if missing); FailedPrecondition when
  // another process (or another lock in this one) holds it.
  virtual Result<std::unique_ptr<FileLock>> LockFile(const std::string& path) = 0;

  // Microseconds since the Unix epoch (UTC). Virtual in tests.
  virtual int64_t NowMicros() = 0;
  virtual void SleepMicros(int64_t micros) = 0;
};

// Forwards every call to another Env (not owned unless given as unique_ptr); a subclass
// overrides what it changes.
class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(std::unique_ptr<Env> owned) : owned_(std::move(owned)), base_(owned_.get()) {}
  explicit EnvWrapper(Env* base) : base_(base) {}
  Env* base() const { return base_; }

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool truncate) override {
    return base_->NewWritableFile(path, truncate);
  }
  Result<std::unique_ptr<SequentialFile>> NewSequentialFile(const std::string& p) override { return base_->NewSequentialFile(p); }
  Result<std::string> ReadFile(const std::string& p) override { return base_->ReadFile(p); }
  Result<uint64_t> FileSize(const std::string& p) override { return base_->FileSize(p); }
  bool FileExists(const std::string& p) override { return base_->FileExists(p); }
  Result<std::vector<std::string>> ListDir(const std::string& d) override { return base_->ListDir(d); }
  Status CreateDirs(const std::string& d) override { return base_->CreateDirs(d); }
  Status SyncDir(const std::string& d) override { return base_->SyncDir(d); }
  Status Truncate(const std::string& p, uint64_t s) override { return base_->Truncate(p, s); }
  Status Rename(const std::string& a, const std::string& b) override { return base_->Rename(a, b); }
  Status RemoveFile(const std::string& p) override { return base_->RemoveFile(p); }
  Result<std::unique_ptr<FileLock>> LockFile(const std::string& p) override { return base_->LockFile(p); }
  int64_t NowMicros() override { return base_->NowMicros(); }
  void SleepMicros(int64_t micros) override { base_->SleepMicros(micros); }

 private:
  std::unique_ptr<Env> owned_;
  Env* base_;
};

// The real operating system. Thread-safe.
std::unique_ptr<Env> NewPosixEnv();
// `base` (not owned, must outlive the result) with Sync and SyncDir that return at once:
// the same bytes in the same order, nothing waits for the disk (common/durability.h,
// Durability::kUnsynced; simulated federations only).
std::unique_ptr<Env> NewUnsyncedEnv(Env* base);

// Writes `data` to `path` so that a crash leaves either the old or the new content:
// write a temporary file, fdatasync, rename over `path`, sync the directory.
Status WriteFileAtomic(Env& env, const std::string& path, std::string_view data);

}  // namespace gpufed::audit
