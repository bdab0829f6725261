#include "controller/reconcile/pod_mix_tracker.h"

#include <gtest/gtest.h>

#include <deque>

namespace gpufed::reconcile {
namespace {

model::ResourceRequest Gpus(int n) {
  model::ResourceRequest r;
  r.gpus = n;
  return r;
}

// `ones` one-GPU requests and `eights` eight-GPU ones.
std::vector<const model::ResourceRequest*> Work(std::deque<model::ResourceRequest>& keep, int ones, int eights) {
  std::vector<const model::ResourceRequest*> work;
  for (int i = 0; i < ones; ++i) work.push_back(&keep.emplace_back(Gpus(1)));
  for (int i = 0; i < eights; ++i) work.push_back(&keep.emplace_back(Gpus(8)));
  return work;
}

TEST(PodMixTracker, DriftIsTheTotalVariationDistance) {
  const PodMixTracker::Mix a = {{Gpus(1), 3}, {Gpus(8), 1}};
  const PodMixTracker::Mix b = {{Gpus(1), 1}, {Gpus(8), 1}};
  EXPECT_DOUBLE_EQ(PodMixTracker::Drift(a, a), 0);
  EXPECT_DOUBLE_EQ(PodMixTracker::Drift(a, b), 0.25);  // 3/4 vs 1/2 of the work is one GPU
  EXPECT_DOUBLE_EQ(PodMixTracker::Drift(a, {{Gpus(2), 5}}), 1);
  EXPECT_DOUBLE_EQ(PodMixTracker::Drift(a, {}), 1);
}

TEST(PodMixTracker, KeepsThePublishedMixUntilTheWorkDriftsPastTheLimit) {
  std::deque<model::ResourceRequest> keep;
  PodMixTracker tracker(0.1);
  PodMixTracker::Mix first = tracker.Update(Work(keep, 90, 10));
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].second, 90);
  EXPECT_EQ(tracker.refreshes(), 1);
  // 5 of 100 changed shape: the same mix is planned with, counts and all.
  EXPECT_EQ(tracker.Update(Work(keep, 85, 15))[0].second, 90);
  EXPECT_EQ(tracker.refreshes(), 1);
  // A fifth changed: the work's own mix is published.
  EXPECT_EQ(tracker.Update(Work(keep, 70, 30))[0].second, 70);
  EXPECT_EQ(tracker.refreshes(), 2);
  // A shape the mix has never seen, as a large share, counts as drift too.
  EXPECT_EQ(tracker.Update(Work(keep, 0, 0)).size(), 2u);  // nothing to plan: unchanged
  std::vector<const model::ResourceRequest*> work = Work(keep, 70, 30);
  for (int i = 0; i < 20; ++i) work.push_back(&keep.emplace_back(Gpus(4)));
  EXPECT_EQ(tracker.Update(work).size(), 3u);
  EXPECT_EQ(tracker.refreshes(), 3);
}

}  // namespace
}  // namespace gpufed::reconcile
