#include "connectors/local/bookkeeping_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <thread>

#include "connectors/local/job_folders.h"

namespace gpufed::connectors::local {
namespace {

constexpr const char* kLockFile = "lock";
constexpr const char* kEpochFile = "epoch";

int64_t ReadFloor(const std::string& dir) {
  const std::string text = ReadSmallFile(dir + "/" + kEpochFile);
  int64_t epoch = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), epoch);
  return ec == std::errc() && end == text.data() + text.size() && epoch > 0 ? epoch : 0;
}

}  // namespace

Result<BookkeepingLock> BookkeepingLock::Take(const std::string& dir, Duration wait) {
  const std::string path = dir + "/" + kLockFile;
  UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return Unavailable("open " + path + ": " + std::strerror(errno));
  // Polled rather than blocking: a holder that is paused (SIGSTOP) must not stall the
  // replica that leads now beyond `wait`; it tries again on its next pass.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait.millis());
  while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return Unavailable("lock " + path + ": " + std::strerror(errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      return Unavailable("another replica has held " + path + " for over " + wait.ToString() +
                         " (a deposed leader paused in the middle of a launch?); trying again on the next pass");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return BookkeepingLock(dir, std::move(fd), ReadFloor(dir));
}

Status BookkeepingLock::Raise(int64_t epoch) {
  if (epoch <= floor_) return Status::Ok();
  GPUFED_RETURN_IF_ERROR(WriteSmallFile(dir_ + "/" + kEpochFile, std::to_string(epoch)));
  floor_ = epoch;
  return Status::Ok();
}

}  // namespace gpufed::connectors::local
