#pragma once
// An Env for tests: real files (through a wrapped Env), virtual time, and injected
// faults: failing fdatasync, a full disk after N bytes, failing writes.
#include <atomic>
#include <memory>
#include <mutex>

#include "controller/audit/env.h"

namespace gpufed::audit::testing {

class FaultEnv : public EnvWrapper {
 public:
  explicit FaultEnv(std::unique_ptr<Env> base = NewPosixEnv()) : EnvWrapper(std::move(base)) {}

  // Faults, settable at any time.
  std::atomic<bool> fail_sync{false};
  std::atomic<int64_t> disk_bytes_left{-1};  // -1: unlimited; else ENOSPC beyond it
  std::atomic<int64_t> syncs{0};
  // Virtual clock: SleepMicros advances it instead of sleeping.
  std::atomic<int64_t> now_micros{1'795'000'000'000'000};  // 2026-11-18
  // A crash after this many more changes to the file system (-1: never): that many
  // succeed, the next and every later one fail (Unavailable), as if the process had died
  // there, and a test then opens the folders as the next process would. Changes: creating a
  // writable file, each Append (the crashing one writes half its bytes: a torn write) and
  // Sync, Rename, RemoveFile, SyncDir, Truncate.
  std::atomic<int64_t> changes_left{-1};
  std::atomic<int64_t> crashes{0};  // changes refused since the crash

  Result<std::unique_ptr<WritableFile>> NewWritableFile(const std::string& path, bool truncate) override {
    GPUFED_RETURN_IF_ERROR(Change());
    auto f = base()->NewWritableFile(path, truncate);
    if (!f.ok()) return f.status();
    return std::unique_ptr<WritableFile>(new File(this, std::move(*f)));
  }
  Status SyncDir(const std::string& d) override {
    GPUFED_RETURN_IF_ERROR(Change());
    return base()->SyncDir(d);
  }
  Status Truncate(const std::string& p, uint64_t s) override {
    GPUFED_RETURN_IF_ERROR(Change());
    return base()->Truncate(p, s);
  }
  Status Rename(const std::string& a, const std::string& b) override {
    GPUFED_RETURN_IF_ERROR(Change());
    return base()->Rename(a, b);
  }
  Status RemoveFile(const std::string& p) override {
    GPUFED_RETURN_IF_ERROR(Change());
    return base()->RemoveFile(p);
  }
  int64_t NowMicros() override { return now_micros.load(); }
  void SleepMicros(int64_t micros) override { now_micros += micros; }
  void Advance(int64_t micros) { now_micros += micros; }

 private:
  Status Change() {
    int64_t left = changes_left.load();
    while (left > 0 && !changes_left.compare_exchange_weak(left, left - 1)) {
    }
    if (left == 0) {
      crashes++;
      return Unavailable("the process crashed here (injected)");
    }
    return Status::Ok();
  }

  class File : public WritableFile {
   public:
    File(FaultEnv* env, std::unique_ptr<WritableFile> base) : env_(env), base_(std::move(base)) {}
    Status Append(std::string_view data) override {
      if (Status crash = env_->Change(); !crash.ok()) {
        (void)base_->Append(data.substr(0, data.size() / 2));
        return crash;
      }
      int64_t left = env_->disk_bytes_left.load();
      if (left >= 0 && static_cast<int64_t>(data.size()) > left) {
        // Like a real full disk: what fits is written, then ENOSPC.
        (void)base_->Append(data.substr(0, static_cast<size_t>(left)));
        env_->disk_bytes_left = 0;
        return ResourceExhausted("write: No space left on device (injected)");
      }
      if (left >= 0) env_->disk_bytes_left -= static_cast<int64_t>(data.size());
      return base_->Append(data);
    }
    Status Sync() override {
      GPUFED_RETURN_IF_ERROR(env_->Change());
      env_->syncs++;
      if (env_->fail_sync) return Status(StatusCode::kInternal, "fdatasync: Input/output error (injected)");
      return base_->Sync();
    }
    Status Close() override { return base_->Close(); }

   private:
    FaultEnv* env_;
    std::unique_ptr<WritableFile> base_;
  };
};

}  // namespace gpufed::audit::testing
