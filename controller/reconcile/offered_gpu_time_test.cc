#include "controller/reconcile/offered_gpu_time.h"

#include <gtest/gtest.h>

namespace gpufed::reconcile {
namespace {

ClusterStatus WithGpus(const std::vector<int>& per_node) {
  ClusterStatus s;
  s.observed = true;
  for (int gpus : per_node) {
    connectors::ObservedNode node;
    node.gpus.resize(static_cast<size_t>(gpus));
    s.last.nodes.push_back(node);
  }
  return s;
}

TEST(OfferedGpuTime, CreditsTheGpusSeenAtEachPassUntilTheNext) {
  OfferedGpuTime offered;
  std::map<std::string, ClusterStatus> fleet = {{"elastic", WithGpus({8})}, {"fixed", WithGpus({4, 4})}};
  offered.Observe(Duration::FromSeconds(100), fleet);
  fleet["elastic"] = WithGpus({8, 8});  // a node was provisioned
  offered.Observe(Duration::FromSeconds(160), fleet);
  std::map<std::string, double> got = offered.Until(Duration::FromSeconds(220));
  EXPECT_DOUBLE_EQ(got["elastic"], 8 * 60 + 16 * 60);
  EXPECT_DOUBLE_EQ(got["fixed"], 8 * 120);
  // Until leaves later credits alone.
  offered.Observe(Duration::FromSeconds(220), fleet);
  EXPECT_DOUBLE_EQ(offered.Until(Duration::FromSeconds(220))["fixed"], 8 * 120);
}

TEST(OfferedGpuTime, AClusterNeverObservedOffersNothingAndTimeBeforeTheFirstPassIsNotCredited) {
  OfferedGpuTime offered;
  EXPECT_TRUE(offered.Until(Duration::FromSeconds(50)).empty());
  ClusterStatus silent;  // never answered
  offered.Observe(Duration::FromSeconds(10), {{"silent", silent}, {"up", WithGpus({2})}});
  std::map<std::string, double> got = offered.Until(Duration::FromSeconds(20));
  EXPECT_EQ(got.count("silent"), 0u);
  EXPECT_DOUBLE_EQ(got["up"], 20);
}

}  // namespace
}  // namespace gpufed::reconcile
