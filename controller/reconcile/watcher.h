#pragma once
// Notices changes to a policy repository folder: inotify on every directory of the
// tree, or, when inotify is unavailable (or watches run out), a fingerprint of every
// file's path, size and mtime compared at most once per poll interval. Non-blocking:
// the loop calls Changed() between passes. Not thread-safe.
#include <chrono>
#include <string>
#include <vector>

namespace gpufed::reconcile {

class RepoWatcher {
 public:
  // `force_polling` skips inotify (tests of the fallback).
  explicit RepoWatcher(std::string root, bool force_polling = false,
                       std::chrono::milliseconds poll_interval = std::chrono::milliseconds(1000));
  ~RepoWatcher();
  RepoWatcher(const RepoWatcher&) = delete;
  RepoWatcher& operator=(const RepoWatcher&) = delete;

  // True once per burst of changes since the last call.
  bool Changed();
  bool using_inotify() const { return fd_ >= 0; }

 private:
  void AddWatches();
  std::string Fingerprint() const;

  std::string root_;
  int fd_ = -1;
  std::chrono::milliseconds poll_interval_;
  std::chrono::steady_clock::time_point last_poll_;
  std::string fingerprint_;
};

}  // namespace gpufed::reconcile
