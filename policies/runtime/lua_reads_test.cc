// Read recording: what a hook call learned about its workload argument, so the placer
// can share the result with workloads that look the same there.
#include <gtest/gtest.h>

#include "policies/runtime/lua_policy.h"
#include "policies/runtime/test_util.h"

namespace gpufed::policy {
namespace {

using testing::Cluster;
using testing::MustLoad;
using testing::Workload;
using Kind = ViewRead::Kind;

// The reads of one filter call of `body` (the inside of `function filter(w, c)`).
std::vector<ViewRead> ReadsOf(const std::string& body, const nlohmann::json& w = Workload()) {
  auto file = MustLoad("function filter(w, c)\n" + body + "\nend");
  if (!file) return {{"<load failed>", Kind::kValue}};
  file->RecordReads(true);
  auto verdict = file->Filter(w, Cluster(), {});
  if (!verdict.ok()) return {{"<error> " + verdict.error().message, Kind::kValue}};
  return file->TakeReads();
}

TEST(LuaReads, ScalarsAndContainersOnThePathAreRecorded) {
  EXPECT_EQ(ReadsOf("return w.data.sensitivity == 'confidential'"),
            (std::vector<ViewRead>{{"/data", Kind::kValue}, {"/data/sensitivity", Kind::kValue}}));
}

TEST(LuaReads, ClusterAndParamsReadsAreNotRecorded) {
  EXPECT_EQ(ReadsOf("return c.zone == 'eu' and c.pools[1].model ~= nil"), std::vector<ViewRead>{});
}

TEST(LuaReads, ArrayIndexLengthAndMissingMembers) {
  EXPECT_EQ(ReadsOf("return #w.resources.models > 1 and w.resources.models[5] == nil and w.nope == nil"),
            (std::vector<ViewRead>{{"/nope", Kind::kValue},
                                   {"/resources", Kind::kValue},
                                   {"/resources/models", Kind::kValue},
                                   {"/resources/models", Kind::kLength},
                                   {"/resources/models/4", Kind::kValue}}));
}

TEST(LuaReads, IterationDependsOnTheWholeSubtree) {
  EXPECT_EQ(ReadsOf("for k, v in pairs(w.labels) do end return true"),
            (std::vector<ViewRead>{{"/labels", Kind::kValue}, {"/labels", Kind::kWhole}}));
  // The iterator function taken from pairs and called on another view counts too.
  EXPECT_EQ(ReadsOf("local next_of = pairs(w.labels) next_of(w.data, nil) return true"),
            (std::vector<ViewRead>{{"/data", Kind::kValue}, {"/data", Kind::kWhole}, {"/labels", Kind::kValue},
                                   {"/labels", Kind::kWhole}}));
}

TEST(LuaReads, RandomDependsOnTheNameThatSeedsIt) {
  EXPECT_EQ(ReadsOf("return math.random(10) > 0"), (std::vector<ViewRead>{{"/name", Kind::kValue}}));
}

TEST(LuaReads, AskingForTheTimeIsRecorded) {
  // The same for every workload of a plan, not from one plan to the next (plan memo).
  EXPECT_EQ(ReadsOf("return now() >= 0"), (std::vector<ViewRead>{{"", Kind::kNow}}));
  EXPECT_EQ(ReadsOf("return true"), std::vector<ViewRead>{});
}

TEST(LuaReads, KeysAreEscapedAsJsonPointers) {
  nlohmann::json w = Workload();
  w["labels"]["a/b~c"] = "x";
  EXPECT_EQ(ReadsOf("return w.labels['a/b~c'] == 'x'", w),
            (std::vector<ViewRead>{{"/labels", Kind::kValue}, {"/labels/a~1b~0c", Kind::kValue}}));
}

TEST(LuaReads, NothingIsRecordedWhenOffAndTakeForgets) {
  auto file = MustLoad("function filter(w, c) return w.tenant == 'ml' end");
  ASSERT_TRUE(file);
  ASSERT_TRUE(file->Filter(Workload(), Cluster(), {}).ok());
  EXPECT_TRUE(file->TakeReads().empty());
  file->RecordReads(true);
  ASSERT_TRUE(file->Filter(Workload(), Cluster(), {}).ok());
  ASSERT_TRUE(file->Filter(Workload(), Cluster(), {}).ok());
  EXPECT_EQ(file->TakeReads(), (std::vector<ViewRead>{{"/tenant", Kind::kValue}}));  // unique
  EXPECT_TRUE(file->TakeReads().empty());
}

}  // namespace
}  // namespace gpufed::policy
