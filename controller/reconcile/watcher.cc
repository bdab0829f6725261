#include "controller/reconcile/watcher.h"

#include <sys/inotify.h>
#include <unistd.h>

#include <filesystem>

namespace gpufed::reconcile {

namespace fs = std::filesystem;

RepoWatcher::RepoWatcher(std::string root, bool force_polling, std::chrono::milliseconds poll_interval)
    : root_(std::move(root)), poll_interval_(poll_interval) {
  if (!force_polling) {
    fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (fd_ >= 0) AddWatches();
  }
  fingerprint_ = Fingerprint();
  last_poll_ = std::chrono::steady_clock::now();
}

RepoWatcher::~RepoWatcher() {
  if (fd_ >= 0) ::close(fd_);
}

void RepoWatcher::AddWatches() {
  const uint32_t mask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE;
  if (inotify_add_watch(fd_, root_.c_str(), mask) < 0) {
    ::close(fd_);  // watches exhausted or not a directory: poll instead
    fd_ = -1;
    return;
  }
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root_, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && inotify_add_watch(fd_, it->path().c_str(), mask) < 0) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
  }
}

std::string RepoWatcher::Fingerprint() const {
  std::string out;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root_, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    auto mtime = fs::last_write_time(it->path(), ec).time_since_epoch().count();
    out += it->path().string() + ":" + std::to_string(it->file_size(ec)) + ":" + std::to_string(mtime) + "\n";
  }
  return out;
}

bool RepoWatcher::Changed() {
  if (fd_ >= 0) {
    bool any = false;
    alignas(inotify_event) char buf[4096];
    while (true) {
      ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) break;
      any = true;
    }
    if (any) AddWatches();  // new subdirectories need watches too (duplicates are merged)
    return any;
  }
  auto now = std::chrono::steady_clock::now();
  if (now - last_poll_ < poll_interval_) return false;
  last_poll_ = now;
  std::string f = Fingerprint();
  if (f == fingerprint_) return false;
  fingerprint_ = std::move(f);
  return true;
}

}  // namespace gpufed::reconcile
