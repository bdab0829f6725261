// Property: sharing hook results between workloads that look the same to the hooks
// (PolicyHooks::RecordWorkloadReads) never changes a plan. Random fleets and workloads
// (fixed seeds) under a Lua policy whose reads branch on the workload; each plan is
// made twice, with sharing and with hooks that refuse to record (so every workload is
// evaluated on its own), and must match decision for decision, verdict for verdict.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "controller/placement/plan.h"
#include "policies/engine/hook_set.h"
#include "tests/testutil/fleet_builder.h"

namespace gpufed::policy {
namespace {

constexpr const char* kBranchyPolicy = R"(
function filter(w, c, p)
  if w.data.sensitivity == "restricted" then
    if w.labels.team == "secops" then return c.provider == "onprem", "secops stays on-prem" end
    return c.zone == "eu", "restricted data stays in the EU"
  end
  if w.data.pii and #w.data.residency == 0 and c.zone ~= "eu" then return false, "pii" end
  if w.resources.gpus > p.maxCloudGpus and c.provider ~= "onprem" then return false, "too big for cloud" end
  return true
end

function score(w, c, p)
  local s = 0
  if w.type == "inference" and c.provider ~= "onprem" then s = s + 3 end
  for k, v in pairs(w.labels) do
    if k == "prefer" and v == c.name then s = s + 10 end
  end
  if w.priority > 600 then s = s + math.random(5) end
  return s
end
)";

// Forwards to a HookSet but cannot record reads: the placer then shares nothing.
class Unshared : public placement::PolicyHooks {
 public:
  explicit Unshared(placement::PolicyHooks* inner) : inner_(inner) {}
  std::vector<placement::HookOutcome> Admit(const nlohmann::json& w, double now) override { return inner_->Admit(w, now); }
  std::vector<placement::HookOutcome> Filter(const nlohmann::json& w, const nlohmann::json& c, double now) override {
    return inner_->Filter(w, c, now);
  }
  double Score(const nlohmann::json& w, const nlohmann::json& c, double now, std::vector<std::string>& errors) override {
    return inner_->Score(w, c, now, errors);
  }

 private:
  placement::PolicyHooks* inner_;
};

struct Case {
  model::Config config;
  std::vector<model::Workload> workloads;
};

Case MakeCase(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Case k;
  const char* providers[] = {"onprem", "aws", "ionos"};
  const char* zones[] = {"eu", "us"};
  const int clusters = pick(2, 12);
  for (int c = 0; c < clusters; ++c) {
    k.config.clusters.push_back(testutil::MakeCluster("c" + std::to_string(c), providers[pick(0, 2)],
                                                      zones[pick(0, 1)], pick(1, 3), pick(1, 8)));
  }
  k.config.tenants = {testutil::MakeTenant("t0"), testutil::MakeTenant("t1", 2)};
  model::Policy policy;
  policy.metadata.name = "branchy";
  policy.lua_files = {"branchy.lua"};
  policy.params = {{"maxCloudGpus", pick(1, 4)}};
  k.config.policies = {policy};
  k.config.lua_sources["branchy.lua"] = kBranchyPolicy;
  const char* teams[] = {"secops", "nlp", "vision"};
  const int count = pick(10, 80);
  for (int i = 0; i < count; ++i) {
    model::Workload w = testutil::MakeWorkload("w" + std::to_string(i), pick(0, 1) ? "t1" : "t0", pick(1, 8));
    w.metadata.labels["team"] = teams[pick(0, 2)];
    if (pick(0, 3) == 0) w.metadata.labels["prefer"] = "c" + std::to_string(pick(0, clusters - 1));
    w.data.sensitivity = pick(0, 3) == 0 ? model::Sensitivity::kRestricted : model::Sensitivity::kInternal;
    w.data.pii = pick(0, 4) == 0;
    if (pick(0, 5) == 0) w.data.residency = {"eu"};
    w.type = pick(0, 1) ? model::WorkloadType::kInference : model::WorkloadType::kTraining;
    w.priority = pick(0, 2) * 400;
    w.submitted_at = Duration::FromSeconds(pick(0, 100));
    k.workloads.push_back(w);
  }
  return k;
}

std::string Describe(const placement::Plan& plan) {
  std::string s;
  for (const placement::Decision& d : plan.decisions) {
    s += d.workload + " " + placement::OutcomeName(d.outcome) + " " + d.binding.cluster + " " + d.reason + "\n";
    for (const placement::ClusterVerdict& v : d.verdicts) {
      s += "  " + v.cluster + " " + v.rule + " " + v.reason + " " + std::to_string(v.score.total) + "\n";
      for (const std::string& warning : v.warnings) s += "    " + warning + "\n";
    }
  }
  return s;
}

placement::Plan PlanWith(const Case& k, placement::PolicyHooks* hooks, size_t explain_clusters) {
  placement::Snapshot snapshot;
  snapshot.config = &k.config;
  for (const model::Workload& w : k.workloads) snapshot.pending.push_back(&w);
  snapshot.hooks = hooks;
  snapshot.explain_clusters = explain_clusters;
  return placement::MakePlan(snapshot);
}

TEST(HookMemoProperty, SharingHookResultsNeverChangesAPlan) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    Case k = MakeCase(seed);
    auto shared = HookSet::Compile(k.config);
    auto inner = HookSet::Compile(k.config);
    ASSERT_TRUE(shared.ok() && inner.ok()) << shared.status().ToString();
    Unshared unshared(inner->get());
    const placement::Plan with_sharing = PlanWith(k, shared->get(), placement::Snapshot::kExplainAllClusters);
    const placement::Plan without = PlanWith(k, &unshared, placement::Snapshot::kExplainAllClusters);
    ASSERT_EQ(Describe(with_sharing), Describe(without)) << "seed " << seed;
  }
}

TEST(HookMemoProperty, GroupedExplanationsDoNotChangeDecisions) {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    Case k = MakeCase(seed);
    auto full_hooks = HookSet::Compile(k.config);
    auto grouped_hooks = HookSet::Compile(k.config);
    ASSERT_TRUE(full_hooks.ok() && grouped_hooks.ok());
    const placement::Plan full = PlanWith(k, full_hooks->get(), placement::Snapshot::kExplainAllClusters);
    const placement::Plan grouped = PlanWith(k, grouped_hooks->get(), 1);
    ASSERT_EQ(full.decisions.size(), grouped.decisions.size());
    for (size_t i = 0; i < full.decisions.size(); ++i) {
      const placement::Decision& a = full.decisions[i];
      const placement::Decision& b = grouped.decisions[i];
      ASSERT_EQ(a.workload, b.workload) << "seed " << seed;
      ASSERT_EQ(a.outcome, b.outcome) << "seed " << seed << " " << a.workload;
      ASSERT_EQ(a.binding.cluster, b.binding.cluster) << "seed " << seed << " " << a.workload;
      ASSERT_EQ(a.binding.nodes, b.binding.nodes);
      ASSERT_EQ(a.binding.gpus, b.binding.gpus);
      ASSERT_EQ(a.denied_by, b.denied_by) << "seed " << seed << " " << a.workload;
      // Every cluster is either listed or counted in exactly one group.
      size_t accounted = b.verdicts.size();
      for (const placement::VerdictGroup& g : b.verdict_groups) accounted += static_cast<size_t>(g.clusters);
      ASSERT_EQ(accounted, k.config.clusters.size()) << "seed " << seed << " " << a.workload;
      // The groups are the full listing's verdicts of the clusters not listed, grouped by
      // rule: first the clusters ruled out for the class, then the eligible ones, each
      // kind in order of its first cluster, with that cluster's reason and the first
      // three names (clusters in name order).
      std::set<std::string> listed_names;
      for (const placement::ClusterVerdict& v : b.verdicts) listed_names.insert(v.cluster);
      std::vector<placement::VerdictGroup> expected[2];  // [eligible]
      for (const placement::ClusterVerdict& v : a.verdicts) {
        if (listed_names.count(v.cluster)) continue;
        std::vector<placement::VerdictGroup>& kind = expected[v.eligible ? 1 : 0];
        auto g = std::find_if(kind.begin(), kind.end(), [&](const auto& x) { return x.rule == v.rule; });
        if (g == kind.end()) {
          g = kind.insert(kind.end(), placement::VerdictGroup{v.rule, v.reason, 0, {}});
          if (v.eligible && v.rule.empty()) g->reason = "eligible; scored lower";
        }
        ++g->clusters;
        if (g->examples.size() < 3) g->examples.push_back(v.cluster);
      }
      if (!b.verdict_groups.empty() || b.verdicts.size() < a.verdicts.size()) {
        std::vector<placement::VerdictGroup> want = expected[0];
        want.insert(want.end(), expected[1].begin(), expected[1].end());
        ASSERT_EQ(placement::VerdictGroupsToJson(b.verdict_groups).dump(), placement::VerdictGroupsToJson(want).dump())
            << "seed " << seed << " " << a.workload;
      }
      // The chosen cluster is always listed with its score.
      if (a.outcome == placement::Outcome::kPlaced) {
        bool listed = false;
        for (const placement::ClusterVerdict& v : b.verdicts) listed = listed || v.cluster == b.binding.cluster;
        ASSERT_TRUE(listed) << "seed " << seed << " " << a.workload;
      }
    }
  }
}

}  // namespace
}  // namespace gpufed::policy
