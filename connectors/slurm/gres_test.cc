#include "connectors/slurm/gres.h"

#include <limits>

#include "connectors/slurm/api.h"
#include "connectors/slurm/api_common.h"

#include <gtest/gtest.h>

namespace gpufed::connectors::slurm {
namespace {

// A reply's GPUs per node times its node count used to overflow an int (UBSan; found by
// fuzz_slurm_response). The job's total now saturates.
TEST(Gres, JobTotalFromPerNodeCountsSaturates) {
  SlurmJob job;
  job.gres_per_node = {GresItem{"gpu", "a100", 2, {}}};
  FillJobGres(job, {}, 1795410511);
  ASSERT_EQ(job.gres.size(), 1u);
  EXPECT_EQ(job.gres[0].count, std::numeric_limits<int>::max());
  SlurmJob small;
  small.gres_per_node = {GresItem{"gpu", "", 4, {}}};
  FillJobGres(small, {}, 2);
  ASSERT_EQ(small.gres.size(), 1u);
  EXPECT_EQ(small.gres[0].count, 8);
}

TEST(Gres, ParsesTypedConfiguredList) {
  std::vector<GresItem> g = ParseGres("gpu:a100:2,gpu:a100_1g.5gb:4");
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].name, "gpu");
  EXPECT_EQ(g[0].type, "a100");
  EXPECT_EQ(g[0].count, 2);
  EXPECT_EQ(g[1].type, "a100_1g.5gb");
  EXPECT_EQ(g[1].count, 4);
}

TEST(Gres, ParsesUsedListWithIndicesContainingCommas) {
  std::vector<GresItem> g = ParseGres("gpu:a100:2(IDX:0,1),gpu:a100_1g.5gb:3(IDX:2-3,5)");
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].indices, (std::vector<int>{0, 1}));
  EXPECT_EQ(g[1].count, 3);
  EXPECT_EQ(g[1].indices, (std::vector<int>{2, 3, 5}));
}

TEST(Gres, NotApplicableIndicesAreEmpty) {
  std::vector<GresItem> g = ParseGres("gpu:a100:0(IDX:N/A),gpu:a100_1g.5gb:0(IDX:N/A)");
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].count, 0);
  EXPECT_TRUE(g[0].indices.empty());
}

TEST(Gres, SocketAnnotationsAndUntypedItems) {
  std::vector<GresItem> g = ParseGres("gpu:h100:8(S:0-1),gpu:2,mps:400,shard");
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0].type, "h100");
  EXPECT_EQ(g[0].count, 8);
  EXPECT_TRUE(g[0].indices.empty());
  EXPECT_EQ(g[1].type, "");
  EXPECT_EQ(g[1].count, 2);
  EXPECT_EQ(g[2].name, "mps");
  EXPECT_EQ(g[2].count, 400);
  EXPECT_EQ(g[3].name, "shard");
  EXPECT_EQ(g[3].count, 1);
}

TEST(Gres, TypeWithoutCountMeansOne) {
  std::vector<GresItem> g = ParseGres("gpu:a100");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].type, "a100");
  EXPECT_EQ(g[0].count, 1);
}

TEST(Gres, EmptyAndNullGiveNothing) {
  EXPECT_TRUE(ParseGres("").empty());
  EXPECT_TRUE(ParseGres("(null)").empty());
  EXPECT_TRUE(ParseGres("N/A").empty());
}

TEST(Gres, HostileInputNeverCrashesAndStaysSmall) {
  for (const char* s : {",,,", "(", ")", "gpu:(", ":::", "gpu:a:-3", "gpu:a:2(IDX:5-2)", "gpu:a:1(IDX:0-999999999)",
                        "gpu:a:99999999999999999999", "((((", "gpu:a:1(IDX:", "\x01\x02:\xff"}) {
    std::vector<GresItem> g = ParseGres(s);
    for (const GresItem& item : g) EXPECT_LE(item.indices.size(), 4096u) << s;
  }
  EXPECT_TRUE(ParseIndexList("3-1").empty());
  EXPECT_TRUE(ParseIndexList("x").empty());
  // Found by fuzz_slurm_response (UBSan: the loop's int overflowed past INT_MAX).
  EXPECT_EQ(ParseIndexList("2147483647"), (std::vector<int>{2147483647}));
  EXPECT_EQ(ParseIndexList("2147483646-2147483647"), (std::vector<int>{2147483646, 2147483647}));
}

TEST(MigType, ParsesProfileAfterUnderscore) {
  std::optional<MigType> m = ParseMigType("a100_1g.5gb");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->base, "a100");
  EXPECT_EQ(m->profile, "1g.5gb");
  EXPECT_EQ(m->compute_slices, 1);
  EXPECT_EQ(m->memory_gb, 5);
  std::optional<MigType> n = ParseMigType("nvidia_a100-sxm4-80gb_3g.40gb");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->base, "nvidia_a100-sxm4-80gb");
  EXPECT_EQ(n->compute_slices, 3);
  EXPECT_EQ(n->memory_gb, 40);
}

TEST(MigType, WholeGpuTypesAreNotMig) {
  EXPECT_FALSE(ParseMigType("a100"));
  EXPECT_FALSE(ParseMigType("a100_80gb"));
  EXPECT_FALSE(ParseMigType("_1g.5gb"));
  EXPECT_FALSE(ParseMigType("a100_9g.5gb"));
  EXPECT_FALSE(ParseMigType("a100_xg.5gb"));
}

TEST(TypeMatchesModel, MatchesOnDashBoundariesIgnoringCaseAndVendor) {
  EXPECT_TRUE(TypeMatchesModel("a100", "A100-40GB"));
  EXPECT_TRUE(TypeMatchesModel("a100", "A100"));
  EXPECT_TRUE(TypeMatchesModel("nvidia_a100-sxm4-40gb", "A100-SXM4-40GB"));
  EXPECT_TRUE(TypeMatchesModel("h100_80gb", "H100-80GB"));
  EXPECT_FALSE(TypeMatchesModel("a10", "A100-40GB"));
  EXPECT_FALSE(TypeMatchesModel("a100", "H100-80GB"));
  EXPECT_FALSE(TypeMatchesModel("", "A100"));
}

}  // namespace
}  // namespace gpufed::connectors::slurm
