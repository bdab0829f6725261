#include "controller/reconcile/submitted_specs.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "controller/config/loader.h"

namespace gpufed::reconcile {
namespace {

model::Workload Named(const std::string& name) {
  model::Workload w;
  w.metadata.name = name;
  return w;
}

TEST(SubmittedSpecs, ASpecIsTakenOnceAndOnlyUnderItsRevision) {
  SubmittedSpecs specs;
  specs.Put("u1", {"rev-a", Named("a")});
  specs.Put("u2", {"rev-a", Named("b")});
  std::optional<model::Workload> a = specs.Take("u1", "rev-a");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->metadata.name, "a");
  EXPECT_FALSE(specs.Take("u1", "rev-a").has_value()) << "taken twice";
  EXPECT_FALSE(specs.Take("u2", "rev-b").has_value()) << "checked under another revision";
  EXPECT_FALSE(specs.Take("u2", "rev-a").has_value()) << "a stale entry is dropped, not kept";
  EXPECT_EQ(specs.size(), 0u);
}

TEST(SubmittedSpecs, StaysBoundedWhetherOrNotTheLoopTakesWhatIsPut) {
  SubmittedSpecs specs;
  std::mt19937 rng(3);
  for (size_t i = 0; i < 5 * SubmittedSpecs::kCapacity; ++i) {
    specs.Put("u" + std::to_string(i), {"r", Named("w")});
    if (rng() % 2) (void)specs.Take("u" + std::to_string(i), "r");
    ASSERT_LE(specs.size(), SubmittedSpecs::kCapacity);
  }
  // The newest are kept, the oldest went.
  const size_t last = 5 * SubmittedSpecs::kCapacity - 1;
  (void)specs.Take("u" + std::to_string(last), "r");
  specs.Put("fresh", {"r", Named("w")});
  EXPECT_TRUE(specs.Take("fresh", "r").has_value());
  EXPECT_FALSE(specs.Take("u0", "r").has_value());
}

// What the API hands over (its parse, file name set to the loop's) is what the loop's own
// parse of the stored text gives, for bodies with every kind of field.
TEST(SubmittedSpecs, TheApisParseWithTheLoopsFileNameIsTheLoopsParse) {
  config::LoadResult repo = config::LoadText(R"(apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: t}
spec: {weight: 1}
---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: p}
spec:
  enforcement: warn
  priorityClasses: {urgent: 5000}
  rules: []
)",
                                             "repo.yaml");
  ASSERT_TRUE(repo.ok()) << repo.diagnostics.items().front().ToString();
  const std::string bodies[] = {
      "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: w1, labels: {team: a}}\nspec:\n  tenant: t\n"
      "  type: training\n  priority: urgent\n  resources: {gpus: 2, topology: same-node}\n  durationHint: 2h\n"
      "  data: {sensitivity: confidential, pii: true, residency: [eu]}\n"
      "  checkpoint: {enabled: true, interval: 15m, uri: s3://x}\n  preemptible: true\n  maxCost: 12.50 EUR\n",
      "\n\n# leading comment\napiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata:\n  name: w2\nspec:\n"
      "  tenant: t\n  type: inference\n  resources: {gpuMemory: 4Gi}\n",
      R"({"apiVersion": "gpufed/v1alpha1", "kind": "Workload", "metadata": {"name": "w3"},
          "spec": {"tenant": "t", "type": "batch", "resources": {"gpus": 1}, "preemptible": true}})",
  };
  for (const std::string& body : bodies) {
    config::LoadResult api = config::LoadText(body, "request.yaml", &repo.config);
    ASSERT_TRUE(api.ok()) << api.diagnostics.items().front().ToString();
    ASSERT_EQ(api.config.workloads.size(), 1u);
    model::Workload handed = api.config.workloads[0];
    handed.metadata.location.file = "api/" + handed.metadata.name + ".yaml";
    if (handed.max_cost) handed.max_cost_location.file = handed.metadata.location.file;
    config::LoadResult loop = config::LoadText(body, "api/" + handed.metadata.name + ".yaml", &repo.config);
    ASSERT_TRUE(loop.ok());
    EXPECT_EQ(handed, loop.config.workloads[0]) << body;
  }
}

}  // namespace
}  // namespace gpufed::reconcile
