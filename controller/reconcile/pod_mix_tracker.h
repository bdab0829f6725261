#pragma once
// The pod mix the loop plans with (placement::Snapshot::pod_mix): the requests of the work
// waiting and running, each shape with its count. The packing policy judges
// fragmentation against it. A mix that followed every arrival would differ in every pass,
// and every fit a pass found would be stale in the next; so the tracker publishes a new
// mix only when the work has drifted from the published one by more than `max_drift`
// (total variation distance between the two shape distributions: 0.1 means a tenth of
// the work would have to change shape). The published mix is recorded in each pass's
// audit snapshot, so replay plans against the same one.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "controller/model/workload.h"

namespace gpufed::reconcile {

class PodMixTracker {
 public:
  using Mix = std::vector<std::pair<model::ResourceRequest, int64_t>>;
  static constexpr double kDefaultMaxDrift = 0.1;

  explicit PodMixTracker(double max_drift = kDefaultMaxDrift) : max_drift_(max_drift) {}

  // This pass's work (each request once per workload); returns the mix to plan with.
  const Mix& Update(const std::vector<const model::ResourceRequest*>& work);

  // Total variation distance between two mixes (0: same shares, 1: disjoint shapes).
  static double Drift(const Mix& a, const Mix& b);
  // The mix the last Update returned (empty before the first).
  const Mix& published() const { return published_; }
  int64_t refreshes() const { return refreshes_; }

 private:
  double max_drift_;
  Mix published_;
  int64_t refreshes_ = 0;
};

}  // namespace gpufed::reconcile
