#pragma once
// The lock and the term floor of a `local` cluster's bookkeeping when replicas share it
// (local.gpufed.io/bookkeeping-dir under `gpufed run --store`; README.md, "Replicas").
//
// Replicas of one controller on one host take turns at the cluster's processes. Each
// term's connector holds the folder's lock (flock on <dir>/lock) around every step that
// reads or changes the record (ledger.log, jobs/<key>/) or signals a job, and the folder
// keeps the highest term that has held it (<dir>/epoch). A connector of an older term is
// refused there: a deposed leader that resumes after a pause launches and signals nothing,
// and a launch that a deposed leader began before the new one arrived ends before the new
// one reads the record (it waits for the lock), so it is adopted, never repeated.
#include <cstdint>
#include <string>
#include <utility>

#include "controller/common/duration.h"
#include "controller/common/secure_file.h"
#include "controller/common/status.h"

namespace gpufed::connectors::local {

class BookkeepingLock {
 public:
  // Takes the lock of `dir` (exclusive), waiting at most `wait` while another replica
  // holds it; Unavailable when it could not (a replica paused while holding it: the
  // caller tries again later, it never waits unbounded).
  static Result<BookkeepingLock> Take(const std::string& dir, Duration wait);

  // The highest term that has held the folder; 0 when none was recorded.
  int64_t floor() const { return floor_; }
  // Records `epoch` as the floor, durably, when it is higher than the floor.
  Status Raise(int64_t epoch);

 private:
  BookkeepingLock(std::string dir, UniqueFd fd, int64_t floor)
      : dir_(std::move(dir)), fd_(std::move(fd)), floor_(floor) {}
  std::string dir_;
  UniqueFd fd_;  // holds the flock; closing it releases the lock
  int64_t floor_ = 0;
};

}  // namespace gpufed::connectors::local
