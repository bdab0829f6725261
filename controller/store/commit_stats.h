#pragma once
// What the store's commits cost, for /metrics (controller_metrics.cc): each COMMIT's wall
// time by writer (in a durable store, its fsync), how many API submissions each group
// commit carried, and how long an API submission waited in the store, from queueing to
// its group's commit. An API submission's latency is mostly this wait: on a disk that
// flushes in 4 ms, about two commits. Thread-safe, with a lock of its own, so a scrape
// never waits for the store's.
#include <cstddef>

#include "controller/common/metrics_text.h"
#include "controller/common/mutex.h"

namespace gpufed::store {

class CommitStats {
 public:
  enum class Writer { kApi, kLoop };  // a group of API submissions; the loop's writes
  struct Snapshot {
    Histogram api_commit_seconds;
    Histogram loop_commit_seconds;
    Histogram group_size;  // submissions per API group commit
    Histogram submit_wait_seconds;
  };

  CommitStats();
  void OnCommit(Writer writer, double seconds);
  void OnGroup(size_t submissions);
  void OnSubmitWait(double seconds);
  Snapshot Read() const;

 private:
  mutable Mutex mu_;
  Snapshot stats_ GUARDED_BY(mu_);
};

}  // namespace gpufed::store
