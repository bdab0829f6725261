#include "controller/reconcile/offered_gpu_time.h"

namespace gpufed::reconcile {
namespace {

void Credit(std::map<std::string, double>& seconds, const std::map<std::string, int>& gpus, Duration from,
            Duration to) {
  if (to <= from) return;
  const double span = static_cast<double>(to.millis() - from.millis()) / 1000.0;
  for (const auto& [name, count] : gpus) seconds[name] += count * span;
}

}  // namespace

void OfferedGpuTime::Observe(Duration now, const std::map<std::string, ClusterStatus>& clusters) {
  if (last_) Credit(seconds_, gpus_, *last_, now);
  gpus_.clear();
  for (const auto& [name, status] : clusters) {
    if (!status.observed) continue;
    int count = 0;
    for (const connectors::ObservedNode& node : status.last.nodes) {
      if (node.ready) count += static_cast<int>(node.gpus.size());  // a provisioning node offers nothing yet
    }
    gpus_[name] = count;
  }
  if (!last_ || now > *last_) last_ = now;
}

std::map<std::string, double> OfferedGpuTime::Until(Duration until) const {
  std::map<std::string, double> out = seconds_;
  if (last_) Credit(out, gpus_, *last_, until);
  return out;
}

}  // namespace gpufed::reconcile
