#pragma once
// The GPU time each cluster offered during this process: the GPUs its last observation
// reported, held from one pass to the next. The run summary's utilisation divides the
// GPU time used by this, so an elastic cluster that grew past its declared nodes, or a
// cluster added or removed by a revision mid-run, is judged on what it actually had.
#include <map>
#include <optional>
#include <string>

#include "controller/common/duration.h"
#include "controller/reconcile/reconciler.h"

namespace gpufed::reconcile {

class OfferedGpuTime {
 public:
  // Credits every cluster the GPUs seen at the previous call for the time since, then
  // takes the GPUs `clusters` report now on ready nodes (a cluster never observed offers
  // none; one that stopped answering offers what it last reported).
  void Observe(Duration now, const std::map<std::string, ClusterStatus>& clusters);
  // GPU-seconds per cluster up to `until` (at or after the last Observe), without
  // changing what later calls credit.
  std::map<std::string, double> Until(Duration until) const;

 private:
  std::optional<Duration> last_;
  std::map<std::string, int> gpus_;        // per cluster, as of last_
  std::map<std::string, double> seconds_;  // credited up to last_
};

}  // namespace gpufed::reconcile
