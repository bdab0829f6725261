#include "controller/store/commit_stats.h"

namespace gpufed::store {
namespace {

// A synced commit takes a flush (0.1-10 ms on SSDs and virtual disks); a second or more
// means the disk is in trouble.
const std::vector<double> kCommitBounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                           0.01,   0.025,   0.05,   0.1,   0.25,   1};
// A submission waits for the group before its own: about two commits.
const std::vector<double> kWaitBounds = {0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                         0.05,    0.1,    0.25,  0.5,    1,     5};
// At most Store::kMaxSubmitGroup (256) per group.
const std::vector<double> kGroupBounds = {1, 2, 4, 8, 16, 32, 64, 128, 256};

}  // namespace

CommitStats::CommitStats()
    : stats_{Histogram(kCommitBounds), Histogram(kCommitBounds), Histogram(kGroupBounds), Histogram(kWaitBounds)} {}

void CommitStats::OnCommit(Writer writer, double seconds) {
  MutexLock lock(mu_);
  (writer == Writer::kApi ? stats_.api_commit_seconds : stats_.loop_commit_seconds).Observe(seconds);
}

void CommitStats::OnGroup(size_t submissions) {
  MutexLock lock(mu_);
  stats_.group_size.Observe(static_cast<double>(submissions));
}

void CommitStats::OnSubmitWait(double seconds) {
  MutexLock lock(mu_);
  stats_.submit_wait_seconds.Observe(seconds);
}

CommitStats::Snapshot CommitStats::Read() const {
  MutexLock lock(mu_);
  return stats_;
}

}  // namespace gpufed::store
