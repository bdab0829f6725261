// What `gpufed docs rules` lists is what rules accept: every path of the view tables,
// with its documented example, loads without an error; paths outside them do not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/config/loader.h"
#include "controller/model/view_fields.h"

namespace gpufed::config {
namespace {

std::string PolicyWith(const std::string& section, const std::string& condition) {
  std::string other = section == "when" ? "require: {cluster.zone: eu}" : "when: {type: training}";
  return "apiVersion: gpufed/v1alpha1\nkind: Policy\nmetadata: {name: p}\nspec:\n  rules:\n    - name: r\n      " +
         section + ": {" + condition + "}\n      " + other + "\n";
}

std::string Dump(const LoadResult& r) {
  std::string s;
  for (const Diagnostic& d : r.diagnostics.items()) s += "  " + d.ToString() + "\n";
  return s;
}

void ExpectExamplesLoad(const std::string& section, const std::string& prefix,
                        std::span<const model::ViewField> fields) {
  for (const model::ViewField& f : fields) {
    if (!f.in_rules) continue;
    std::string path = prefix + std::string(f.path);
    if (path.ends_with(".*")) path.replace(path.size() - 1, 1, f.key);
    LoadResult r = LoadText(PolicyWith(section, path + ": " + std::string(f.example)), "p.yaml");
    EXPECT_TRUE(r.ok()) << path << ": " << f.example << "\n" << Dump(r);
    ASSERT_EQ(r.config.policies.size(), 1u);
    EXPECT_EQ(r.config.policies[0].rules[0].when.size() + r.config.policies[0].rules[0].require.size(), 2u) << path;
  }
}

TEST(RulePaths, EveryDocumentedPathLoadsWithItsExample) {
  ExpectExamplesLoad("when", "", model::WorkloadViewFields());
  ExpectExamplesLoad("when", "workload.", model::WorkloadViewFields());
  ExpectExamplesLoad("require", "cluster.", model::ClusterViewFields());
  ExpectExamplesLoad("require", "node.", model::NodePoolViewFields());
}

TEST(RulePaths, PathsOutsideTheTablesAreErrors) {
  for (const char* condition : {"resources.gpu: 1", "cluster: x", "data: {exists: true}"}) {
    LoadResult r = LoadText(PolicyWith("when", condition), "p.yaml");
    EXPECT_FALSE(r.ok()) << condition;
  }
  LoadResult r = LoadText(PolicyWith("require", "node.gpu.modle: T4"), "p.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.diagnostics.items()[0].message, ::testing::HasSubstr("did you mean 'model'?"));
}

TEST(RulePaths, DurationsCompareAsSeconds) {
  LoadResult r = LoadText(PolicyWith("when", "durationHint: {gt: 8h}"), "p.yaml");
  ASSERT_TRUE(r.ok()) << Dump(r);
  EXPECT_EQ(r.config.policies[0].rules[0].when[0].operand, 28800.0);
}

}  // namespace
}  // namespace gpufed::config
