#include "controller/reconcile/pod_mix_tracker.h"

#include <cmath>
#include <map>

#include "controller/placement/node_packer.h"

namespace gpufed::reconcile {

double PodMixTracker::Drift(const Mix& a, const Mix& b) {
  auto total = [](const Mix& m) {
    int64_t n = 0;
    for (const auto& [request, count] : m) n += count;
    return n;
  };
  const int64_t ta = total(a), tb = total(b);
  if (ta == 0 || tb == 0) return ta == tb ? 0 : 1;
  std::map<std::string, std::pair<double, double>> shares;  // shape -> (share in a, share in b)
  for (const auto& [request, count] : a) shares[placement::PodMix::KeyOf(request)].first += double(count) / double(ta);
  for (const auto& [request, count] : b) shares[placement::PodMix::KeyOf(request)].second += double(count) / double(tb);
  double distance = 0;
  for (const auto& [key, share] : shares) distance += std::abs(share.first - share.second);
  return distance / 2;
}

const PodMixTracker::Mix& PodMixTracker::Update(const std::vector<const model::ResourceRequest*>& work) {
  placement::PodMix grouped;
  for (const model::ResourceRequest* r : work) {
    if (r != nullptr) grouped.Add(*r);
  }
  Mix now;
  now.reserve(grouped.shapes().size());
  for (const placement::PodMix::Shape& shape : grouped.shapes()) now.emplace_back(shape.request, shape.count);
  // No work says nothing about the mix: the published one stands.
  if (!now.empty() && (published_.empty() || Drift(published_, now) > max_drift_)) {
    published_ = std::move(now);
    ++refreshes_;
  }
  return published_;
}

}  // namespace gpufed::reconcile
