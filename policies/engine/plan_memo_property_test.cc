// Property: a PlanMemo kept between plans never changes a plan. Random pass sequences
// (fixed seeds) over random fleets (whole, MIG and memory-shared pools, elastic nodes,
// observed inventories that lag, preemptible work) under a Lua policy whose filter and
// score branch on the workload and on the time. Every pass is planned twice, with the
// memo of the passes before and from scratch, and the two plans must match decision for
// decision: outcome, binding down to GPU indices, preemptions, reasons, every verdict.
// Between passes placed work starts running, some running work finishes, new work
// arrives, time moves on, and now and then the pod mix or the revision changes.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <set>

#include "controller/placement/plan.h"
#include "policies/engine/hook_set.h"
#include "tests/testutil/fleet_builder.h"

namespace gpufed::policy {
namespace {

constexpr const char* kTimeAwarePolicy = R"(
function filter(w, c, p)
  if w.data.sensitivity == "restricted" then return c.zone == "eu", "restricted data stays in the EU" end
  if w.labels.night == "yes" and c.provider ~= "onprem" then
    return now() % 600 >= 300, "cloud only in the second half of each 10 minutes"
  end
  return true
end

function score(w, c, p)
  local s = 0
  if w.type == "inference" and c.provider ~= "onprem" then s = s + 2 end
  if w.labels.prefer == c.name then s = s + 5 end
  if w.priority > 500 then s = s + (now() % 7) / 7 end
  return s
end
)";

struct Sequence {
  model::Config config;
  std::deque<model::Workload> workloads;  // stable addresses
  std::vector<const model::Workload*> pending;
  std::vector<placement::RunningWorkload> running;
  std::map<std::string, placement::ObservedCluster> observed;
  Duration now;
  int next = 0;
};

model::Workload RandomWorkload(std::mt19937& rng, int index, int clusters) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  model::Workload w = testutil::MakeWorkload("w" + std::to_string(index), pick(0, 1) ? "t1" : "t0", pick(1, 4));
  const int shape = pick(0, 9);
  if (shape < 2) {
    w.resources.gpus = 1;
    w.resources.gpu_memory = Quantity::FromUnits(int64_t{pick(2, 12)} << 30);
    w.type = model::WorkloadType::kInference;
  } else if (shape == 2) {
    w.resources.gpus = 1;
    w.resources.mig_profile = pick(0, 1) ? "1g.5gb" : "3g.20gb";
  } else if (shape == 3) {
    w.resources.gpus = pick(2, 8);
    w.resources.topology = model::Topology::kSameNode;
  }
  if (pick(0, 3) == 0) w.metadata.labels["night"] = "yes";
  if (pick(0, 4) == 0) w.metadata.labels["prefer"] = "c" + std::to_string(pick(0, clusters - 1));
  w.data.sensitivity = pick(0, 4) == 0 ? model::Sensitivity::kRestricted : model::Sensitivity::kInternal;
  w.priority = pick(0, 2) * 400;
  w.has_priority = true;
  w.preemptible = pick(0, 1) == 1;
  w.checkpoint.enabled = pick(0, 1) == 1;
  return w;
}

Sequence MakeSequence(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Sequence s;
  const char* providers[] = {"onprem", "aws", "ionos"};
  const char* zones[] = {"eu", "us"};
  const int clusters = pick(2, 9);
  for (int c = 0; c < clusters; ++c) {
    model::Cluster cluster = testutil::MakeCluster("c" + std::to_string(c), providers[pick(0, 2)], zones[pick(0, 1)],
                                                   pick(1, 3), pick(2, 8));
    testutil::ShareGpus(cluster, static_cast<testutil::Sharing>(pick(0, 2)));
    if (pick(0, 2) == 0) cluster.elasticity.max_nodes = cluster.node_pools[0].count + pick(1, 2);
    s.config.clusters.push_back(cluster);
  }
  s.config.tenants = {testutil::MakeTenant("t0"), testutil::MakeTenant("t1", 2)};
  model::Policy policy;
  policy.metadata.name = "time-aware";
  policy.lua_files = {"time.lua"};
  s.config.policies = {policy};
  s.config.lua_sources["time.lua"] = kTimeAwarePolicy;
  s.config.revision = "r1";
  return s;
}

std::string Describe(const placement::Plan& plan) {
  std::string s;
  for (const placement::Decision& d : plan.decisions) {
    s += d.workload + " " + placement::OutcomeName(d.outcome) + " " + placement::BindingToJson(d.binding).dump() + " " +
         d.reason + " " + d.cost.ToString() + "\n";
    for (const placement::Preemption& p : d.preempted) s += "  preempts " + p.workload + " " + p.reason + "\n";
    for (const placement::ClusterVerdict& v : d.verdicts) s += "  " + placement::ClusterVerdictToJson(v).dump() + "\n";
    s += "  " + placement::VerdictGroupsToJson(d.verdict_groups).dump() + "\n";
    for (const std::string& warning : d.warnings) s += "  warning " + warning + "\n";
  }
  return s;
}

// What the cluster's connector reports: its declared nodes, some GPUs held by others.
void Report(Sequence& s, std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (const model::Cluster& c : s.config.clusters) {
    if (pick(0, 2) != 0) continue;  // most passes report nothing new
    if (pick(0, 3) == 0) {
      s.observed.erase(c.metadata.name);
      continue;
    }
    placement::ObservedCluster o;
    o.healthy = pick(0, 9) != 0;
    const model::NodePool& pool = c.node_pools[0];
    for (int n = 0; n < pool.count; ++n) {
      placement::ObservedNode node;
      node.name = pool.name + "-" + std::to_string(n);
      node.pool = pool.name;
      node.gpus.resize(static_cast<size_t>(pool.gpu.count));
      if (pick(0, 3) == 0) node.gpus[0].free_milli = 0;  // held by another scheduler
      o.nodes.push_back(node);
    }
    // A connector may list its nodes in any order: the same names under other indices.
    if (pick(0, 3) == 0) std::reverse(o.nodes.begin(), o.nodes.end());
    s.observed[c.metadata.name] = o;
  }
}

// mix 0: the plan's own work; 1: the pending work, doubled; 2: mostly small shares and
// whole 8-GPU nodes, a mix that steers the packing policy elsewhere.
placement::Plan PlanOnce(Sequence& s, placement::PolicyHooks* hooks, placement::PlanMemo* memo, size_t explain,
                         int mix) {
  placement::Snapshot snapshot;
  snapshot.config = &s.config;
  snapshot.pending = s.pending;
  snapshot.running = s.running;
  snapshot.observed = s.observed;
  snapshot.now = s.now;
  snapshot.hooks = hooks;
  snapshot.explain_clusters = explain;
  snapshot.memo = memo;
  if (mix == 1) {
    for (const model::Workload* w : s.pending) snapshot.pod_mix.emplace_back(w->resources, 2);
  } else if (mix == 2) {
    model::ResourceRequest share;
    share.gpus = 1;
    share.gpu_memory = Quantity::FromUnits(int64_t{3} << 30);
    model::ResourceRequest node;
    node.gpus = 8;
    node.topology = model::Topology::kSameNode;
    snapshot.pod_mix = {{share, 50}, {node, 10}};
  }
  return placement::MakePlan(snapshot);
}

void Advance(Sequence& s, const placement::Plan& plan, std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::map<std::string, const model::Workload*> by_name;
  for (const model::Workload* w : s.pending) by_name[w->metadata.name] = w;
  for (const placement::RunningWorkload& r : s.running) by_name[r.workload->metadata.name] = r.workload;
  std::set<std::string> preempted;
  std::vector<const model::Workload*> still;
  for (const placement::Decision& d : plan.decisions) {
    for (const placement::Preemption& p : d.preempted) preempted.insert(p.workload);
    if (d.outcome == placement::Outcome::kPlaced) {
      s.running.push_back({by_name.at(d.workload), d.binding, s.now, Duration(), 1});
    } else if (d.outcome == placement::Outcome::kQueued) {
      still.push_back(by_name.at(d.workload));
    }
  }
  std::vector<placement::RunningWorkload> kept;
  for (const placement::RunningWorkload& r : s.running) {
    if (preempted.count(r.workload->metadata.name)) {
      still.push_back(r.workload);  // requeued
    } else if (pick(0, 5) != 0) {
      kept.push_back(r);  // else it finished
    }
  }
  s.running = std::move(kept);
  const int clusters = static_cast<int>(s.config.clusters.size());
  for (int i = pick(0, 6); i > 0; --i) {
    s.workloads.push_back(RandomWorkload(rng, s.next++, clusters));
    s.workloads.back().submitted_at = s.now;
    still.push_back(&s.workloads.back());
  }
  s.pending = std::move(still);
  s.now = Duration::FromSeconds(s.now.seconds() + pick(0, 2) * 150);
  Report(s, rng);
}

TEST(PlanMemoProperty, AMemoKeptBetweenPassesNeverChangesAPlan) {
  size_t kept = 0, rebuilt = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    Sequence s = MakeSequence(rng);
    auto memo_hooks = HookSet::Compile(s.config);
    auto fresh_hooks = HookSet::Compile(s.config);
    ASSERT_TRUE(memo_hooks.ok() && fresh_hooks.ok()) << memo_hooks.status().ToString();
    for (int i = 0; i < 12; ++i) {
      s.workloads.push_back(RandomWorkload(rng, s.next++, static_cast<int>(s.config.clusters.size())));
      s.pending.push_back(&s.workloads.back());
    }
    placement::PlanMemo memo;
    for (int pass = 0; pass < 10; ++pass) {
      const size_t explain = rng() % 3 == 0 ? 1 : placement::Snapshot::kExplainAllClusters;
      const int mix = static_cast<int>(rng() % 3);
      if (pass == 6 && seed % 3 == 0) s.config.revision = "r2";  // a new revision starts the memo over
      const placement::Plan with_memo = PlanOnce(s, memo_hooks->get(), &memo, explain, mix);
      kept += memo.last_plan().clusters_kept;
      rebuilt += memo.last_plan().clusters_rebuilt;
      const placement::Plan fresh = PlanOnce(s, fresh_hooks->get(), nullptr, explain, mix);
      ASSERT_EQ(Describe(with_memo), Describe(fresh)) << "seed " << seed << " pass " << pass;
      // Verdicts the memo kept count as the calls that found them: a policy's calls per
      // pass (its error budget's denominator) are the same either way.
      const auto memo_calls = (*memo_hooks)->TakeCallStats();
      const auto fresh_calls = (*fresh_hooks)->TakeCallStats();
      ASSERT_EQ(memo_calls.size(), fresh_calls.size());
      for (size_t p = 0; p < memo_calls.size(); ++p) {
        ASSERT_EQ(memo_calls[p].calls, fresh_calls[p].calls) << "seed " << seed << " pass " << pass;
        ASSERT_EQ(memo_calls[p].errors, fresh_calls[p].errors) << "seed " << seed << " pass " << pass;
      }
      Advance(s, with_memo, rng);
    }
  }
  // The sequences exercise both paths: states kept from the pass before, and rebuilt.
  EXPECT_GT(kept, rebuilt / 4) << "kept " << kept << ", rebuilt " << rebuilt;
  EXPECT_GT(rebuilt, kept / 4) << "kept " << kept << ", rebuilt " << rebuilt;
}

TEST(PlanMemoProperty, KeepsUnchangedClustersAndRebuildsChangedOnes) {
  std::mt19937 rng(7);
  Sequence s = MakeSequence(rng);
  for (int i = 0; i < 3; ++i) {
    s.workloads.push_back(testutil::MakeWorkload("w" + std::to_string(i), "t0", 1));
    s.pending.push_back(&s.workloads.back());
  }
  placement::PlanMemo memo;
  const placement::Plan first = PlanOnce(s, nullptr, &memo, placement::Snapshot::kExplainAllClusters, 0);
  EXPECT_EQ(memo.last_plan().clusters_rebuilt, s.config.clusters.size());
  Advance(s, first, rng);
  s.pending.clear();
  s.observed.clear();
  std::set<std::string> changed;
  for (const placement::Decision& d : first.decisions) changed.insert(d.binding.cluster);
  changed.erase("");
  for (const placement::RunningWorkload& r : s.running) changed.insert(r.binding.cluster);
  // Same inputs again: only the clusters the first plan placed on (or whose work
  // finished) are rebuilt; the rest are kept.
  PlanOnce(s, nullptr, &memo, placement::Snapshot::kExplainAllClusters, 0);
  EXPECT_LE(memo.last_plan().clusters_rebuilt, changed.size());
  EXPECT_GE(memo.last_plan().clusters_kept, s.config.clusters.size() - changed.size());
  PlanOnce(s, nullptr, &memo, placement::Snapshot::kExplainAllClusters, 0);
  EXPECT_EQ(memo.last_plan().clusters_rebuilt, 0u);
  EXPECT_EQ(memo.last_plan().clusters_kept, s.config.clusters.size());
}

}  // namespace
}  // namespace gpufed::policy
