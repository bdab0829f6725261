// One snapshot pipeline: the controller plans on the placer's full snapshot, so
//  - every journalled decision replays to the same outcome under the recorded revision,
//  - no GPU, MIG slice or share is ever bound twice and no cluster refuses a placement
//    for capacity (property test over random fleets and submission streams, fixed seeds),
//  - preemption is the placer's (victims only where the beneficiary can run), carried
//    out by the loop (checkpoint, stop, requeue as the next attempt),
//  - fair share holds in the loop over a simulated day.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "controller/audit/file_snapshot_store.h"
#include "controller/audit/query.h"
#include "controller/cli/decision_replayer.h"
#include "tests/integration/controller/fleet.h"

namespace gpufed::testing {
namespace {

using store::WorkloadState;

std::string RandomFleet(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::string y = R"(apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: dc}
spec:
  provider: onprem
  region: eu-central
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: a100, count: )" +
                  std::to_string(pick(1, 3)) +
                  R"(, cpu: 64, memory: 512Gi, gpu: {model: A100-80GB, count: 8, memory: 80Gi, nvlink: true}}
    - {name: mig, count: 1, gpu: {model: A100-40GB, count: )" +
                  std::to_string(pick(2, 8)) +
                  R"(, memory: 40Gi, sharing: mig, migProfiles: [1g.5gb, 2g.10gb, 3g.20gb, 7g.40gb]}}
    - {name: l4, count: 1, gpu: {model: L4, count: )" +
                  std::to_string(pick(1, 4)) +
                  R"(, memory: 24Gi, sharing: memory}}
  pricing: {currency: EUR, gpuHour: {A100-80GB: "1.00", A100-40GB: "0.60", L4: "0.30"}}
---
apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: cloud}
spec:
  provider: aws
  region: eu-west
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: h100, count: )" +
                  std::to_string(pick(0, 1)) +
                  R"(, gpu: {model: H100-80GB, count: 8, memory: 80Gi, nvlink: true}}
    - {name: t4, count: 1, gpu: {model: T4, count: 4, memory: 16Gi, sharing: memory}}
  elasticity: {maxNodes: )" +
                  std::to_string(pick(2, 4)) +
                  R"(, provisionDelay: 3m, idleTimeout: 10m}
  pricing: {currency: EUR, gpuHour: {H100-80GB: "3.00", T4: "0.50"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: alpha}
spec: {weight: 2, budget: {period: monthly, limit: "100000 EUR"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: beta}
spec: {weight: 1, budget: {period: monthly, limit: "100000 EUR"}}
---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: placement}
spec:
  enforcement: deny
  rules:
    - name: restricted-stays-onprem
      when: {data.sensitivity: restricted}
      require: {cluster.provider: onprem}
  burst: {queueWait: )" +
                  std::to_string(pick(5, 30)) +
                  R"(m}
  priorityClasses: {low: 100, normal: 500, high: 900}
)";
  return y;
}

struct Submission {
  Duration at;
  std::string yaml;
};

std::vector<Submission> RandomStream(std::mt19937& rng, int count) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const char* shapes[] = {
      "{gpus: 1, gpuModels: [A100-80GB, H100-80GB]}",
      "{gpus: 2}",
      "{gpus: 4, gpuModels: [A100-80GB, H100-80GB]}",
      "{gpus: 8, topology: same-node, gpuModels: [A100-80GB, H100-80GB]}",
      "{nodes: 2, gpusPerNode: 8, gpuModels: [A100-80GB, H100-80GB]}",
      "{gpus: 1, migProfile: 1g.5gb}",
      "{gpus: 1, migProfile: 3g.20gb}",
      "{gpus: 1, gpuMemory: 6Gi}",
      "{gpus: 1, gpuMemory: 12Gi, gpuModels: [L4]}",
  };
  const char* priorities[] = {"low", "normal", "high"};
  std::vector<Submission> out;
  for (int i = 0; i < count; ++i) {
    std::string name = "w" + std::to_string(i);
    std::string prio = priorities[pick(0, 2)];
    // One expression, as the seeded workloads were made: its pick() calls are the seed's
    // stream, and splitting it could reorder them.
    // NOLINTBEGIN(performance-inefficient-string-concatenation)
    std::string y = "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: " + name +
                    "}\nspec:\n  tenant: " + (pick(0, 1) ? "alpha" : "beta") +
                    "\n  type: training\n  resources: " + shapes[pick(0, 8)] + "\n  priority: " + prio +
                    "\n  durationHint: " + std::to_string(pick(10, 180)) + "m\n";
    // NOLINTEND(performance-inefficient-string-concatenation)
    if (prio == "low" && pick(0, 1)) y += "  preemptible: true\n";
    if (pick(0, 2) == 0) {
      y += "  checkpoint: {enabled: true, interval: 10m, uri: s3://c/";
      y += name;
      y += "}\n";
    }
    if (pick(0, 4) == 0) y += "  data: {sensitivity: restricted}\n";
    out.push_back({Duration::FromSeconds(pick(0, 4 * 3600)), y});
  }
  std::sort(out.begin(), out.end(), [](const Submission& a, const Submission& b) { return a.at < b.at; });
  return out;
}

// No GPU is bound beyond its capacity by the work the store says holds capacity.
void ExpectNoGpuBoundTwice(reconcile::Controller& c, const std::string& when) {
  Result<std::vector<store::WorkloadRecord>> all = c.List("");
  ASSERT_TRUE(all.ok());
  std::map<std::string, int> milli;  // cluster/node/gpu -> bound share
  for (const store::WorkloadRecord& r : *all) {
    if (!store::IsActive(r.state)) continue;
    placement::Binding b = placement::BindingFromJson(nlohmann::json::parse(r.binding_json, nullptr, false));
    for (size_t m = 0; m < b.nodes.size(); ++m) {
      for (int g : b.gpus[m]) milli[r.cluster + "/" + b.nodes[m] + "/" + std::to_string(g)] += b.gpu_milli_each;
    }
  }
  for (const auto& [gpu, share] : milli) EXPECT_LE(share, 1000) << gpu << " bound twice " << when;
}

int64_t MetricSum(const std::string& metrics, const std::string& prefix) {
  int64_t sum = 0;
  std::istringstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) sum += std::stoll(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

// Replays every decision of the journal with the recorded revision.
std::pair<int, int> ReplayAll(const std::string& audit_dir) {
  auto env = audit::NewPosixEnv();
  cli::DecisionReplayer replayer(std::make_unique<audit::FileSnapshotStore>(env.get(), audit_dir), {audit_dir, "", ""});
  audit::QueryFilter filter;
  filter.kind = "decision";
  int same = 0, different = 0;
  Status s = audit::ScanRecords(*env, audit_dir, filter, [&](const nlohmann::json& record) {
    if (!cli::IsPlacerDecision(record)) return;
    Result<cli::ReplayComparison> c = replayer.Replay(record);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    if (!c.ok()) return;
    if (c->same) {
      ++same;
    } else {
      ++different;
      ADD_FAILURE() << "seq " << c->seq << " " << c->workload << " replays differently: " << c->differences.dump();
    }
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return {same, different};
}

TEST(Pipeline, RandomFleetsReplayExactlyAndNeverBindAGpuTwice) {
  for (uint32_t seed : {11u, 23u, 37u, 41u, 59u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    std::string dir = FreshDir("pipeline_" + std::to_string(seed));
    std::ofstream(dir + "/repo/fleet.yaml") << RandomFleet(rng);
    std::vector<Submission> stream = RandomStream(rng, 40);
    Harness h;
    ASSERT_TRUE(h.Open(dir).ok());
    size_t next = 0;
    const Duration end = Duration::FromSeconds(int64_t{72} * 3600);
    while (h.clock.Now() < end) {
      while (next < stream.size() && stream[next].at <= h.clock.Now()) {
        std::string file = "api-" + std::to_string(next) + ".yaml";
        ASSERT_TRUE(h.controller->Submit(stream[next++].yaml, file, By("")).ok());
      }
      ASSERT_TRUE(h.controller->Pass().ok());
      ExpectNoGpuBoundTwice(*h.controller, "at " + h.clock.Now().ToString());
      if (next >= stream.size() && (h.controller->Idle() || h.controller->Stuck())) break;
      Duration before = h.clock.Now();
      h.Step();
      if (next < stream.size() && stream[next].at < h.clock.Now()) h.clock.AdvanceTo(std::max(before, stream[next].at));
    }
    EXPECT_EQ(next, stream.size());
    std::string metrics = h.controller->Metrics();
    EXPECT_EQ(MetricSum(metrics, "gpufed_connector_refusals_total{cluster=\"dc\",reason=\"capacity\"}") +
                  MetricSum(metrics, "gpufed_connector_refusals_total{cluster=\"cloud\",reason=\"capacity\"}"),
              0);
    EXPECT_EQ(MetricSum(metrics, "gpufed_connector_refusals_total"), 0);
    h.Close();  // closes the journal
    auto [same, different] = ReplayAll(dir + "/state/audit");
    EXPECT_GT(same, 20);
    EXPECT_EQ(different, 0);
  }
}

constexpr const char* kTwoModelFleet = R"(apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: dc}
spec:
  provider: onprem
  region: eu-central
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: a100, count: 2, gpu: {model: A100-80GB, count: 8, memory: 80Gi, nvlink: true}}
    - {name: v100, count: 2, gpu: {model: V100, count: 8, memory: 32Gi, nvlink: true}}
  pricing: {currency: EUR, gpuHour: {A100-80GB: "1.00", V100: "0.50"}}
---
apiVersion: gpufed/v1alpha1
kind: Tenant
metadata: {name: alpha}
spec: {weight: 1}
---
apiVersion: gpufed/v1alpha1
kind: Policy
metadata: {name: classes}
spec:
  enforcement: deny
  priorityClasses: {low: 100, urgent: 5000}
)";

TEST(Pipeline, PreemptsOnlyWhereTheBeneficiaryCanRunAndResumesVictimsFromTheirCheckpoint) {
  std::string dir = FreshDir("pipeline_preempt");
  std::ofstream(dir + "/repo/fleet.yaml") << kTwoModelFleet;
  std::string low = "  priority: low\n  preemptible: true\n  checkpoint: {enabled: true, interval: 10m, uri: s3://s}\n";
  std::ofstream work(dir + "/repo/work.yaml");
  for (int i = 0; i < 4; ++i) {
    work << "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: sweep-" << i
         << "}\nspec:\n  tenant: alpha\n  type: training\n  resources: {gpus: 8, topology: same-node}\n"
            "  durationHint: 6h\n"
         << low << "---\n";
  }
  work.close();
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(h.controller->Pass().ok());
    h.Step();
  }
  for (int i = 0; i < 4; ++i) ASSERT_EQ(h.Get("sweep-" + std::to_string(i)).state, WorkloadState::kRunning);
  std::string gang =
      "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: gang}\nspec:\n  tenant: alpha\n  type: training\n"
      "  resources: {nodes: 2, gpusPerNode: 8, gpuModels: [A100-80GB]}\n  priority: urgent\n  durationHint: 1h\n";
  ASSERT_TRUE(h.controller->Submit(gang, "gang.yaml", By("")).ok());
  ASSERT_TRUE(h.controller->Pass().ok());
  store::WorkloadRecord placed = h.Get("gang");
  ASSERT_EQ(placed.state, WorkloadState::kPlaced) << placed.reason;
  placement::Binding b = placement::BindingFromJson(nlohmann::json::parse(placed.binding_json));
  ASSERT_EQ(b.nodes.size(), 2u);
  for (const std::string& node : b.nodes) EXPECT_EQ(node.rfind("a100-", 0), 0u) << node;
  int requeued = 0;
  for (int i = 0; i < 4; ++i) {
    store::WorkloadRecord r = h.Get("sweep-" + std::to_string(i));
    placement::Binding vb = placement::BindingFromJson(nlohmann::json::parse(r.binding_json, nullptr, false));
    if (r.attempt == 2) {
      ++requeued;
      EXPECT_NE(r.state, WorkloadState::kRunning);
      EXPECT_GT(r.resume_from.millis(), 0) << r.name << " did not resume from its checkpoint";
    } else {
      // Work on the V100 nodes was never a candidate: the gang cannot use them.
      EXPECT_EQ(r.state, WorkloadState::kRunning) << r.name;
      EXPECT_EQ(vb.nodes.at(0).rfind("v100-", 0), 0u) << r.name;
    }
  }
  EXPECT_EQ(requeued, 2);
  ASSERT_TRUE(h.RunUntilIdle().ok());
  EXPECT_EQ(h.Get("gang").state, WorkloadState::kSucceeded);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(h.Get("sweep-" + std::to_string(i)).state, WorkloadState::kSucceeded);
  // The journal names victim and beneficiary of each preemption.
  auto env = audit::NewPosixEnv();
  int preemptions = 0;
  audit::QueryFilter filter;
  filter.kind = "decision";  // attempt-metered records of the victims say "preempted" too
  filter.outcome = "preempted";
  h.Close();
  ASSERT_TRUE(audit::ScanRecords(*env, dir + "/state/audit", filter, [&](const nlohmann::json& r) {
                ++preemptions;
                EXPECT_EQ(r.value("beneficiary", ""), "gang");
              }).ok());
  EXPECT_EQ(preemptions, 2);
}

// One on-prem sim node with `gpus` A100s, and tenants of the given weights.
std::string OneNodeFleet(int gpus, const std::vector<std::pair<std::string, int>>& tenants) {
  std::string y = R"(apiVersion: gpufed/v1alpha1
kind: Cluster
metadata: {name: dc}
spec:
  provider: onprem
  region: eu-central
  zone: eu
  connector: {type: sim}
  nodePools:
    - {name: a100, count: 1, gpu: {model: A100-80GB, count: )" +
                  std::to_string(gpus) + R"(, memory: 80Gi}}
  pricing: {currency: EUR, gpuHour: {A100-80GB: "1.00"}}
)";
  for (const auto& [name, weight] : tenants) {
    y += "---\napiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: " + name +
         "}\nspec: {weight: " + std::to_string(weight) + "}\n";
  }
  return y;
}

TEST(Pipeline, FairShareGivesTenantsGpuTimeInProportionToTheirWeights) {
  std::string dir = FreshDir("pipeline_fair");
  std::ofstream(dir + "/repo/fleet.yaml") << OneNodeFleet(6, {{"heavy", 2}, {"light", 1}});
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  // Both tenants keep more 1-GPU work waiting than the 6 GPUs can run in a day (288
  // half-hour jobs in all; the heavy tenant's two thirds are 192).
  for (int i = 0; i < 240; ++i) {
    for (const char* tenant : {"heavy", "light"}) {
      std::string name = std::string(tenant) + "-" + std::to_string(i);
      std::string y = "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: " + name +
                      "}\nspec:\n  tenant: " + tenant +
                      "\n  type: training\n  resources: {gpus: 1}\n  durationHint: 30m\n";
      ASSERT_TRUE(h.controller->Submit(y, name + ".yaml", By("")).ok());
    }
  }
  const Duration day = Duration::FromSeconds(int64_t{24} * 3600);
  while (h.clock.Now() < day) {
    ASSERT_TRUE(h.controller->Pass().ok());
    h.Step();
  }
  ASSERT_TRUE(h.controller->Pass().ok());
  Result<std::vector<store::AttemptRow>> attempts = h.controller->store()->Attempts();
  ASSERT_TRUE(attempts.ok());
  std::map<std::string, double> gpu_seconds;
  for (const store::AttemptRow& a : *attempts) gpu_seconds[a.tenant] += a.gpu_seconds;
  ASSERT_GT(gpu_seconds["light"], 0);
  const double ratio = gpu_seconds["heavy"] / gpu_seconds["light"];
  EXPECT_NEAR(ratio, 2.0, 0.2) << "heavy " << gpu_seconds["heavy"] << " GPU-s, light " << gpu_seconds["light"];
}

// A tenant's past use outlives a controller restart: after one tenant held the only
// GPU for six hours, its next job waits behind a newcomer's although it was submitted
// first (without the saved ledger both tenants would look fresh, and the tie between
// tenants goes to the first name, "alpha").
TEST(Pipeline, FairShareSurvivesARestart) {
  std::string dir = FreshDir("pipeline_fair_restart");
  std::ofstream(dir + "/repo/fleet.yaml") << OneNodeFleet(1, {{"alpha", 1}, {"beta", 1}});
  auto job = [](const std::string& name, const std::string& tenant, const std::string& duration) {
    return "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: " + name + "}\nspec:\n  tenant: " + tenant +
           "\n  type: training\n  resources: {gpus: 1}\n  durationHint: " + duration + "\n";
  };
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  ASSERT_TRUE(h.controller->Submit(job("long", "alpha", "6h"), "long.yaml", By("")).ok());
  ASSERT_TRUE(h.RunUntilIdle(Duration::FromSeconds(int64_t{8} * 3600)).ok());
  ASSERT_TRUE(h.Stop("restart").ok());
  h.Close();

  ASSERT_TRUE(h.Open(dir).ok());
  ASSERT_TRUE(h.controller->Submit(job("again", "alpha", "1h"), "again.yaml", By("")).ok());
  ASSERT_TRUE(h.controller->Submit(job("first", "beta", "1h"), "first.yaml", By("")).ok());
  ASSERT_TRUE(h.controller->Pass().ok());
  Result<store::WorkloadRecord> newcomer = h.controller->Get({"", "first"}, "");
  Result<store::WorkloadRecord> past = h.controller->Get({"", "again"}, "");
  ASSERT_TRUE(newcomer.ok() && past.ok());
  EXPECT_EQ(newcomer->state, store::WorkloadState::kPlaced) << newcomer->reason;
  EXPECT_EQ(past->state, store::WorkloadState::kQueued) << past->reason;
}

// Two tenants run workloads of the same names in the same passes: each keeps its own
// record, they never share a GPU, every run is booked under its own uid, and every
// decision replays to the same outcome (the replay tells them apart by tenant).
TEST(Pipeline, TenantsSharingWorkloadNamesReplayExactly) {
  std::string dir = FreshDir("pipeline_same_names");
  std::ofstream(dir + "/repo/fleet.yaml") << OneNodeFleet(4, {{"alpha", 1}, {"beta", 1}});
  Harness h;
  ASSERT_TRUE(h.Open(dir).ok());
  for (int i = 0; i < 6; ++i) {
    for (const char* tenant : {"beta", "alpha"}) {
      const std::string name = "job-" + std::to_string(i);
      std::string y = "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: " + name +
                      "}\nspec:\n  tenant: " + tenant +
                      "\n  type: training\n  resources: {gpus: " + std::to_string(1 + i % 2) +
                      "}\n  durationHint: " + std::to_string(20 + 10 * i) + "m\n";
      ASSERT_TRUE(h.controller->Submit(y, name + ".yaml", By(tenant)).ok());
    }
  }
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(h.controller->Pass().ok());
    ExpectNoGpuBoundTwice(*h.controller, "at " + h.clock.Now().ToString());
    if (h.controller->Idle() || h.controller->Stuck()) break;
    h.Step();
  }
  Result<std::vector<store::WorkloadRecord>> all = h.controller->List("");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 12u);
  for (const store::WorkloadRecord& r : *all) {
    EXPECT_EQ(r.state, store::WorkloadState::kSucceeded) << r.tenant << "/" << r.name << ": " << r.reason;
  }
  Result<std::vector<store::AttemptRow>> attempts = h.controller->store()->Attempts();
  ASSERT_TRUE(attempts.ok());
  std::set<std::string> uids;
  for (const store::AttemptRow& a : *attempts) uids.insert(a.uid);
  EXPECT_EQ(uids.size(), 12u);
  h.Close();  // closes the journal
  auto [same, different] = ReplayAll(dir + "/state/audit");
  EXPECT_GE(same, 12);
  EXPECT_EQ(different, 0);
}

}  // namespace
}  // namespace gpufed::testing
