#include "bench/replay/openb_trace.h"

#include <gtest/gtest.h>

#include "bench/replay/reference.h"
#include "bench/replay/report.h"

namespace gpufed::replay {
namespace {

std::string Data(const std::string& name) { return std::string(GPUFED_SOURCE_DIR) + "/bench/replay/testdata/" + name; }

TEST(OpenbTrace, ReadsNodesAndPodsByHeaderName) {
  auto nodes = ReadOpenbNodes(Data("nodes.csv"));
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 4u);
  EXPECT_EQ((*nodes)[1].name, "tiny-node-1");
  EXPECT_EQ((*nodes)[1].num_gpu, 4);
  EXPECT_EQ((*nodes)[1].model, "V100M16");

  auto pods = ReadOpenbPods(Data("pods.csv"));
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  ASSERT_EQ(pods->size(), 10u);
  EXPECT_EQ((*pods)[5].allowed_models, (std::vector<std::string>{"V100M16", "G2"}));
  EXPECT_EQ((*pods)[1].gpu_milli, 500);
  EXPECT_TRUE((*pods)[1].IsShared());
  EXPECT_FALSE((*pods)[4].NeedsGpu());
}

TEST(OpenbTrace, FiveColumnPodFilesParse) {
  auto pods = ReadOpenbPods(Data("pods_multigpu_columns.csv"));
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  EXPECT_EQ(pods->size(), 2u);
  EXPECT_TRUE((*pods)[0].allowed_models.empty());
}

TEST(OpenbTrace, ErrorsNameFileLineAndColumn) {
  auto bad = ReadOpenbPods(Data("pods_bad_number.csv"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("pods_bad_number.csv:3: column 'memory_mib'"), std::string::npos)
      << bad.status().message();

  auto header = ReadOpenbPods(Data("pods_bad_header.csv"));
  ASSERT_FALSE(header.ok());
  EXPECT_NE(header.status().message().find("header lacks column 'cpu_milli'"), std::string::npos);

  auto missing = ReadOpenbNodes(Data("no_such_file.csv"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(OpenbTrace, ParsesSeedsAndPolicies) {
  auto seeds = ParseSeeds("42-44,50");
  ASSERT_TRUE(seeds.ok());
  EXPECT_EQ(*seeds, (std::vector<uint64_t>{42, 43, 44, 50}));
  EXPECT_FALSE(ParseSeeds("44-42").ok());
  EXPECT_FALSE(ParseSeeds("x").ok());
  auto policies = ParsePolicies("fgd, gpufed,fgd");
  ASSERT_TRUE(policies.ok());
  EXPECT_EQ(*policies, (std::vector<std::string>{"fgd", "gpufed"}));
  EXPECT_FALSE(ParsePolicies("fgd,magic").ok());
}

TEST(Reference, MapsPolicyLabels) {
  EXPECT_EQ(OurPolicyName("06-FGD"), "fgd");
  EXPECT_EQ(OurPolicyName("03-GpuClustering"), "clustering");
  EXPECT_EQ(OurPolicyName("99-Magic"), "");
}

}  // namespace
}  // namespace gpufed::replay
