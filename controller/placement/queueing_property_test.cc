// Property tests of queueing over random fleets and event-driven runs (fixed seeds):
// preemption only when it makes the higher-priority workload fit and never below a
// guarantee; fair share converges to the weights; no placement exceeds a budget; no
// burst below the thresholds; no workload moves from the cloud back on-prem.
#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <set>

#include "controller/placement/fair_share.h"
#include "controller/placement/plan.h"
#include "tests/testutil/fleet_builder.h"

namespace gpufed::placement {
namespace {

Duration Seconds(double s) { return Duration::FromMillis(static_cast<int64_t>(s * 1000)); }
Duration Hours(double h) { return Seconds(h * 3600); }

// Free whole GPUs per node of an on-prem pool after `running` (node name -> count).
std::map<std::string, int> FreeGpus(const model::Cluster& c, const std::vector<RunningWorkload>& running,
                                    const std::set<std::string>& skip) {
  std::map<std::string, int> free;
  for (int n = 0; n < c.node_pools[0].count; ++n) free["pool-" + std::to_string(n)] = c.node_pools[0].gpu.count;
  for (const RunningWorkload& r : running) {
    if (r.binding.cluster != c.metadata.name || skip.count(r.workload->metadata.name)) continue;
    for (size_t m = 0; m < r.binding.nodes.size(); ++m) free[r.binding.nodes[m]] -= r.binding.gpus[m].size();
  }
  return free;
}

TEST(QueueingProperty, PreemptsOnlyWhenNeededMinimallyAndNeverBelowAGuarantee) {
  int preemptions = 0, guarded = 0;
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    model::Config config;
    const int nodes = pick(1, 3), per_node = pick(2, 8);
    config.clusters.push_back(testutil::MakeCluster("onprem", "onprem", "eu", nodes, per_node));
    for (int t = 0; t < 3; ++t) {
      config.tenants.push_back(testutil::MakeTenant("t" + std::to_string(t)));
      config.tenants.back().guaranteed_gpus = pick(0, 1) ? pick(0, 4) : 0;
    }
    // Fill every node with random running work.
    std::deque<model::Workload> workloads;
    std::vector<RunningWorkload> running;
    for (int n = 0; n < nodes; ++n) {
      int next = 0;
      while (next < per_node) {
        int g = std::min(pick(1, 4), per_node - next);
        workloads.push_back(
            testutil::MakeWorkload("r" + std::to_string(workloads.size()), "t" + std::to_string(pick(0, 2)), g));
        model::Workload& w = workloads.back();
        w.priority = pick(0, 3) * 100;
        w.preemptible = pick(0, 3) > 0;
        w.checkpoint.enabled = pick(0, 1) == 1;
        RunningWorkload r;
        r.workload = &w;
        r.binding.cluster = "onprem";
        r.binding.nodes = {"pool-" + std::to_string(n)};
        r.binding.gpus = {{}};
        for (int k = 0; k < g; ++k) r.binding.gpus[0].push_back(next + k);
        r.started_at = Seconds(pick(0, 1000));
        running.push_back(r);
        next += g;
        if (pick(0, 4) == 0) next += 1;  // leave a gap now and then
      }
    }
    workloads.push_back(testutil::MakeWorkload("urgent", "t" + std::to_string(pick(0, 2)), pick(1, per_node)));
    model::Workload& urgent = workloads.back();
    urgent.priority = pick(1, 4) * 100;
    Snapshot snapshot;
    snapshot.config = &config;
    snapshot.now = Seconds(2000);
    snapshot.pending = {&urgent};
    snapshot.running = running;
    Plan plan = MakePlan(snapshot);
    const Decision& d = plan.decisions.at(0);
    if (d.preempted.empty()) continue;
    ++preemptions;
    ASSERT_EQ(d.outcome, Outcome::kPlaced);
    ASSERT_EQ(d.binding.cluster, "onprem");
    std::set<std::string> victims;
    for (const Preemption& p : d.preempted) victims.insert(p.workload);
    // Without preemption it would not have fit: no node had enough free GPUs.
    for (const auto& [node, free] : FreeGpus(config.clusters[0], running, {})) EXPECT_LT(free, urgent.resources.gpus);
    // Minimal: sparing any one victim leaves no node with room.
    for (const std::string& v : victims) {
      std::set<std::string> others = victims;
      others.erase(v);
      bool fits = false;
      for (const auto& [node, free] : FreeGpus(config.clusters[0], running, others))
        fits |= free >= urgent.resources.gpus;
      EXPECT_FALSE(fits) << "victim " << v << " was not needed";
    }
    // Victims: lower priority, preemptible; no tenant left below its guarantee.
    std::map<std::string, int> in_use, freed;
    for (const RunningWorkload& r : running) {
      in_use[r.workload->tenant] += r.workload->resources.gpus;
      if (victims.count(r.workload->metadata.name)) {
        EXPECT_LT(r.workload->priority, urgent.priority);
        EXPECT_TRUE(r.workload->preemptible);
        freed[r.workload->tenant] += r.workload->resources.gpus;
      }
    }
    for (const model::Tenant& t : config.tenants) {
      if (freed[t.metadata.name] > 0) {
        EXPECT_GE(in_use[t.metadata.name] - freed[t.metadata.name], t.guaranteed_gpus) << t.metadata.name;
        guarded += t.guaranteed_gpus > 0;
      }
    }
  }
  EXPECT_GT(preemptions, 60);
  EXPECT_GT(guarded, 5);
}

// A small event-driven cluster simulation around MakePlan, as a reconcile loop would run it.
struct SimJob {
  model::Workload w;
  Duration runtime;
  std::optional<RunningWorkload> running;
  Duration end;
  bool done = false;
  std::vector<std::string> clusters;  // every cluster it was placed on, in order
};

class Sim {
 public:
  Sim(model::Config config, Duration half_life) : config_(std::move(config)), ledger_(half_life) {}
  SimJob& Submit(model::Workload w, Duration runtime) {
    jobs_.push_back(SimJob{std::move(w), runtime, std::nullopt, Duration(), false, {}});
    return jobs_.back();
  }
  // One reconcile pass at `now`: finish jobs, plan, start placed ones, requeue victims.
  // `check` sees the snapshot and the plan before they are applied.
  template <typename Check>
  void Step(Duration now, Check&& check) {
    ledger_.Advance(now);
    for (SimJob& j : jobs_) {
      if (j.running && j.end <= now) {
        ledger_.Hold(j.w.tenant, ledger_.Held(j.w.tenant) - int64_t{j.w.resources.gpus} * 1000);
        j.running.reset();
        j.done = true;
      }
    }
    Snapshot s;
    s.config = &config_;
    s.now = now;
    s.fair_share_half_life = ledger_.half_life();
    std::map<std::string, SimJob*> by_name;
    for (SimJob& j : jobs_) {
      by_name[j.w.metadata.name] = &j;
      if (j.done || j.w.submitted_at > now) continue;
      if (j.running) {
        s.running.push_back(*j.running);
      } else {
        s.pending.push_back(&j.w);
      }
    }
    for (const model::Tenant& t : config_.tenants) {
      TenantUsage& u = s.usage[t.metadata.name];
      u.decayed_gpu_hours = ledger_.DecayedGpuHours(t.metadata.name);
      u.spent = spent_[t.metadata.name];
      u.cloud_spent = cloud_spent_[t.metadata.name];
    }
    Plan plan = MakePlan(s);
    check(s, plan);
    for (const Decision& d : plan.decisions) {
      for (const Preemption& p : d.preempted) {
        SimJob& v = *by_name.at(p.workload);
        ledger_.Hold(v.w.tenant, ledger_.Held(v.w.tenant) - int64_t{v.w.resources.gpus} * 1000);
        v.running.reset();  // requeued
      }
      if (d.outcome != Outcome::kPlaced) continue;
      SimJob& j = *by_name.at(d.workload);
      RunningWorkload r;
      r.workload = &j.w;
      r.binding = d.binding;
      r.started_at = now;
      j.running = r;
      j.end = now + d.binding.ready_after + j.runtime;
      j.clusters.push_back(d.binding.cluster);
      ledger_.Hold(j.w.tenant, ledger_.Held(j.w.tenant) + int64_t{j.w.resources.gpus} * 1000);
      spent_[j.w.tenant] = *spent_[j.w.tenant].Plus(d.cost);  // one currency
      if (!config_.FindCluster(d.binding.cluster)->is_onprem()) {
        cloud_spent_[j.w.tenant] = *cloud_spent_[j.w.tenant].Plus(d.cost);
      }
    }
  }
  // The next time anything changes after `now` (an arrival or a completion).
  std::optional<Duration> Next(Duration now) const {
    std::optional<Duration> next;
    for (const SimJob& j : jobs_) {
      if (j.done) continue;
      Duration t = j.running ? j.end : j.w.submitted_at;
      if (t <= now) continue;
      if (!next || t < *next) next = t;
    }
    return next;
  }
  std::deque<SimJob>& jobs() { return jobs_; }
  const model::Config& config() const { return config_; }
  std::map<std::string, Money>& spent() { return spent_; }
  std::map<std::string, Money>& cloud_spent() { return cloud_spent_; }

 private:
  model::Config config_;
  FairShareLedger ledger_;
  std::deque<SimJob> jobs_;
  std::map<std::string, Money> spent_, cloud_spent_;
};

TEST(QueueingProperty, FairShareConvergesToTheWeights) {
  model::Config config;
  config.clusters.push_back(testutil::MakeCluster("onprem", "onprem", "eu", 3, 4));
  const double weights[] = {1, 2, 3};
  for (int t = 0; t < 3; ++t) config.tenants.push_back(testutil::MakeTenant("t" + std::to_string(t), weights[t]));
  Sim sim(config, Hours(6));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> runtime(0.5, 2.0);
  // Every tenant keeps a backlog of ten one-GPU jobs for the whole run.
  int submitted = 0;
  auto top_up = [&](Duration now) {
    std::map<std::string, int> waiting;
    for (const SimJob& j : sim.jobs()) waiting[j.w.tenant] += !j.done && !j.running;
    for (int t = 0; t < 3; ++t) {
      const std::string tenant = "t" + std::to_string(t);
      for (int k = waiting[tenant]; k < 10; ++k) {
        model::Workload w = testutil::MakeWorkload(tenant + "-" + std::to_string(submitted++), tenant, 1);
        w.submitted_at = now;
        sim.Submit(w, Hours(runtime(rng)));
      }
    }
  };
  Duration now;
  const Duration horizon = Hours(250), measure_from = Hours(30);
  std::map<std::string, double> gpu_hours;
  while (now < horizon) {
    top_up(now);
    sim.Step(now, [](const Snapshot&, const Plan&) {});
    top_up(now);
    std::optional<Duration> next = sim.Next(now);
    if (!next) break;
    // GPU-hours held in [now, next) within the measured window.
    const double from = std::max(now, measure_from).seconds(), to = std::min(*next, horizon).seconds();
    if (to > from) {
      for (const SimJob& j : sim.jobs()) {
        if (j.running) gpu_hours[j.w.tenant] += (to - from) / 3600.0;
      }
    }
    now = *next;
  }
  const double total = gpu_hours["t0"] + gpu_hours["t1"] + gpu_hours["t2"];
  EXPECT_NEAR(total, 12 * (horizon.seconds() - measure_from.seconds()) / 3600.0, 1.0);  // the fleet stayed busy
  for (int t = 0; t < 3; ++t) {
    const double share = gpu_hours["t" + std::to_string(t)] / total;
    EXPECT_NEAR(share, weights[t] / 6.0, 0.02) << "tenant t" << t;
  }
}

TEST(QueueingProperty, BudgetsBurstThresholdsAndNoPingPongHoldOverRandomRuns) {
  int cloud_placements = 0, preemptions = 0, budget_queued = 0;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    model::Config config;
    config.clusters.push_back(testutil::MakeCluster("onprem", "onprem", "eu", 2, 4, "A100-80GB", "1.00"));
    model::Cluster cloud = testutil::MakeCluster("cloud", "aws", "eu", 0, 8, "A100-80GB", "3.00");
    cloud.elasticity.max_nodes = 50;
    cloud.elasticity.provision_delay = Seconds(300);
    config.clusters.push_back(cloud);
    for (int t = 0; t < 3; ++t) {
      model::Tenant tenant = testutil::MakeTenant("t" + std::to_string(t));
      tenant.budget.limit = Money(int64_t{pick(100, 400)} * Money::kMicrosPerUnit, "EUR");
      if (pick(0, 1)) tenant.budget.cloud_limit = Money(int64_t{pick(20, 150)} * Money::kMicrosPerUnit, "EUR");
      tenant.guaranteed_gpus = pick(0, 2);
      config.tenants.push_back(tenant);
    }
    model::Policy policy;
    policy.metadata.name = "burst";
    policy.burst.queue_wait = Seconds(60 * pick(5, 60));
    policy.burst.queue_depth = pick(2, 8);
    config.policies = {policy};
    const Duration wait_limit = *policy.burst.queue_wait;
    const int depth_limit = *policy.burst.queue_depth;
    Sim sim(config, Hours(12));
    for (int i = 0; i < 150; ++i) {
      model::Workload w = testutil::MakeWorkload("w" + std::to_string(i), "t" + std::to_string(pick(0, 2)), pick(1, 4));
      w.priority = pick(0, 2) * 500;
      w.preemptible = pick(0, 1) == 1;
      w.checkpoint.enabled = pick(0, 1) == 1;
      w.submitted_at = Seconds(pick(0, 48 * 3600));
      Duration runtime = Seconds(pick(600, 6 * 3600));
      w.duration_hint = runtime;
      sim.Submit(w, runtime);
    }
    auto check = [&](const Snapshot& s, const Plan& plan) {
      std::set<std::string> running;
      for (const RunningWorkload& r : s.running) running.insert(r.workload->metadata.name);
      int depth = s.onprem_queue_depth;
      std::map<std::string, Money> spent, cloud_spent;
      for (const auto& [t, u] : s.usage) {
        spent[t] = u.spent;
        cloud_spent[t] = u.cloud_spent;
      }
      for (const Decision& d : plan.decisions) {
        EXPECT_FALSE(running.count(d.workload)) << "running work was re-decided";
        for (const Preemption& p : d.preempted) {
          EXPECT_EQ(p.cluster, "onprem");
          ++preemptions;
        }
        const ClusterVerdict& onprem = d.verdicts[1];
        if (d.outcome == Outcome::kQueued && onprem.eligible) ++depth;
        budget_queued += d.outcome == Outcome::kQueued && d.reason.find("budget") != std::string::npos;
        if (d.outcome != Outcome::kPlaced) continue;
        const model::Tenant* t = s.config->FindTenant(d.tenant);
        spent[d.tenant] = *spent[d.tenant].Plus(d.cost);  // one currency
        EXPECT_LE(spent[d.tenant].micros(), t->budget.limit->micros()) << d.workload;
        if (d.binding.cluster == "cloud") {
          ++cloud_placements;
          cloud_spent[d.tenant] = *cloud_spent[d.tenant].Plus(d.cost);
          if (t->budget.cloud_limit) {
            EXPECT_LE(cloud_spent[d.tenant].micros(), t->budget.cloud_limit->micros()) << d.workload;
          }
          // Burst only past a threshold (on-prem was eligible here: same shape, no rules).
          const model::Workload* w = nullptr;
          for (const model::Workload* p : s.pending) {
            if (p->metadata.name == d.workload) w = p;
          }
          const Duration waited = Duration::FromMillis(s.now.millis() - w->submitted_at.millis());
          EXPECT_TRUE(waited >= wait_limit || depth >= depth_limit)
              << d.workload << " burst after " << waited.ToString() << " at depth " << depth;
        }
      }
    };
    Duration now;
    for (int steps = 0; steps < 5000; ++steps) {
      sim.Step(now, check);
      // Wake-ups for burst thresholds, as the reconcile loop's requeue-after would.
      std::optional<Duration> next = sim.Next(now);
      for (const SimJob& j : sim.jobs()) {
        Duration wake = j.w.submitted_at + wait_limit;
        if (!j.done && !j.running && wake > now && (!next || wake < *next)) next = wake;
      }
      if (!next) break;
      now = *next;
    }
    for (const SimJob& j : sim.jobs()) {
      // No ping-pong: once on the cloud, never back on-prem.
      bool was_cloud = false;
      for (const std::string& c : j.clusters) {
        EXPECT_FALSE(was_cloud && c == "onprem") << j.w.metadata.name << " moved back on-prem";
        was_cloud = was_cloud || c == "cloud";
      }
    }
    for (const model::Tenant& t : config.tenants) {
      EXPECT_LE(sim.spent()[t.metadata.name].micros(), t.budget.limit->micros());
      if (t.budget.cloud_limit) {
        EXPECT_LE(sim.cloud_spent()[t.metadata.name].micros(), t.budget.cloud_limit->micros());
      }
    }
  }
  EXPECT_GT(cloud_placements, 100);
  EXPECT_GT(preemptions, 5);
  EXPECT_GT(budget_queued, 20);
}

}  // namespace
}  // namespace gpufed::placement
