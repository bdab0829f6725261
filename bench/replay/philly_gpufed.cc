// The `gpufed` strategy of the Philly replay: the real placer, called once per event
// (arrival, completion, burst wake-up, budget week) with the full snapshot a reconcile
// loop would build: pending work, running work with its bindings, per-tenant decayed
// usage and cloud spend of the week.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <queue>
#include <set>

#include "bench/replay/philly_sim.h"
#include "controller/model/config.h"
#include "controller/placement/fair_share.h"
#include "controller/placement/plan.h"

namespace gpufed::replay {
namespace {

constexpr int64_t kWeekMs = int64_t{7} * 24 * 3600 * 1000;
constexpr const char* kCurrency = "USD";

Money Price(double per_hour) { return Money(static_cast<int64_t>(std::llround(per_hour * 1e6)), kCurrency); }

model::NodePool Pool(const std::string& name, int count, int gpus) {
  model::NodePool pool;
  pool.name = name;
  pool.count = count;
  pool.gpu.model = "GPU";
  pool.gpu.count = gpus;
  pool.gpu.memory = Quantity::FromUnits(int64_t{32} << 30);
  return pool;
}

model::Config BuildConfig(const std::vector<PhillyJob>& jobs, const PhillySetup& setup) {
  model::Config config;
  config.revision = "philly-replay";
  model::Cluster onprem;
  onprem.metadata.name = "onprem";
  onprem.provider = "onprem";
  onprem.zone = "local";
  if (setup.onprem_gpus / kPhillyGpusPerNode > 0) {
    onprem.node_pools.push_back(Pool("n", setup.onprem_gpus / kPhillyGpusPerNode, kPhillyGpusPerNode));
  }
  if (setup.onprem_gpus % kPhillyGpusPerNode > 0) {
    onprem.node_pools.push_back(Pool("r", 1, setup.onprem_gpus % kPhillyGpusPerNode));
  }
  onprem.pricing.currency = kCurrency;
  onprem.pricing.gpu_hour["GPU"] = Price(0);  // owned hardware: sunk cost
  onprem.pricing.egress_per_gib = Price(0);
  model::Cluster cloud;
  cloud.metadata.name = "cloud";
  cloud.provider = "cloud";
  cloud.zone = "local";
  cloud.node_pools.push_back(Pool("c", 0, kPhillyGpusPerNode));
  cloud.elasticity.max_nodes = 1000000;
  cloud.elasticity.provision_delay = setup.provision_delay;
  cloud.pricing.currency = kCurrency;
  cloud.pricing.gpu_hour["GPU"] = Price(setup.cloud_price);
  cloud.pricing.egress_per_gib = Price(0);
  config.clusters = {onprem, cloud};

  std::set<std::string> tenants;
  for (const PhillyJob& j : jobs) tenants.insert(j.tenant);
  // Default weekly cloud budget per tenant: half the on-prem fleet's weekly GPU-hours at
  // the cloud price, shared equally.
  const double budget = setup.cloud_budget >= 0 ? setup.cloud_budget
                                                : 0.5 * setup.onprem_gpus * 168 * setup.cloud_price /
                                                      std::max<size_t>(1, tenants.size());
  for (const std::string& name : tenants) {
    model::Tenant t;
    t.metadata.name = name;
    t.weight = 1;
    t.budget.period = model::BudgetPeriod::kWeekly;
    t.budget.cloud_limit = Price(budget);
    t.budget.alert_at = {0.8, 1.0};
    t.budget.spent = Price(0);
    t.budget.cloud_spent = Price(0);
    config.tenants.push_back(t);
  }
  model::Policy policy;
  policy.metadata.name = "burst";
  policy.burst.queue_wait = setup.burst_wait;
  if (setup.burst_depth > 0) policy.burst.queue_depth = setup.burst_depth;
  config.policies = {policy};
  return config;
}

}  // namespace

StrategyRun RunGpufed(const std::vector<PhillyJob>& jobs, const PhillySetup& setup, const PhillyProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  StrategyRun run;
  run.strategy = "gpufed";
  run.jobs.resize(jobs.size());
  const model::Config config = BuildConfig(jobs, setup);
  std::vector<model::Workload> workloads(jobs.size());
  std::map<std::string, size_t> index;
  for (size_t j = 0; j < jobs.size(); ++j) {
    model::Workload& w = workloads[j];
    w.metadata.name = "j" + std::to_string(jobs[j].line);
    w.tenant = jobs[j].tenant;
    const GangShape shape = ShapeOf(jobs[j].gpus);
    if (shape.members > 1) {
      w.resources.nodes = shape.members;
      w.resources.gpus_per_node = shape.per_member;
    } else {
      w.resources.gpus = shape.per_member;
    }
    w.duration_hint = Duration::FromMillis(std::max<int64_t>(jobs[j].duration_ms, 1));
    w.submitted_at = Duration::FromMillis(jobs[j].submit_ms);
    index[w.metadata.name] = j;
    run.jobs[j].job = &jobs[j];
    run.jobs[j].gpus = shape.total();
  }

  placement::FairShareLedger ledger(setup.half_life);
  std::map<std::string, Money> cloud_spent;
  std::vector<const model::Workload*> pending;
  std::vector<placement::RunningWorkload> running;
  std::priority_queue<std::pair<int64_t, size_t>, std::vector<std::pair<int64_t, size_t>>, std::greater<>> endings;
  size_t next = 0, started = 0;
  int64_t week = 0;
  int64_t now = 0;
  int idle_plans = 0;  // plans in a row that placed nothing with nothing left to happen
  while (true) {
    // The next event: an arrival, a completion, a burst wake-up or a new budget week.
    int64_t t = INT64_MAX;
    if (next < jobs.size()) t = jobs[next].submit_ms;
    if (!endings.empty()) t = std::min(t, endings.top().first);
    if (!pending.empty()) {
      int64_t oldest = INT64_MAX;
      for (const model::Workload* w : pending) oldest = std::min(oldest, w->submitted_at.millis());
      const int64_t wake = oldest + setup.burst_wait.millis();
      if (wake > now) t = std::min(t, wake);
      const int64_t week_end = (week + 1) * kWeekMs;
      if (week_end > now) t = std::min(t, week_end);
    }
    if (t == INT64_MAX) break;
    now = t;
    ledger.Advance(Duration::FromMillis(now));
    if (now / kWeekMs != week) {
      week = now / kWeekMs;
      cloud_spent.clear();  // a new budget period
    }
    while (!endings.empty() && endings.top().first <= now) {
      const size_t j = endings.top().second;
      endings.pop();
      const std::string& name = workloads[j].metadata.name;
      auto it = std::find_if(running.begin(), running.end(),
                             [&](const placement::RunningWorkload& r) { return r.workload->metadata.name == name; });
      *it = std::move(running.back());
      running.pop_back();
      ledger.Hold(jobs[j].tenant, ledger.Held(jobs[j].tenant) - int64_t{run.jobs[j].gpus} * 1000);
    }
    while (next < jobs.size() && jobs[next].submit_ms <= now) {
      pending.push_back(&workloads[next++]);
    }
    if (pending.empty()) continue;

    placement::Snapshot snapshot;
    snapshot.config = &config;
    snapshot.now = Duration::FromMillis(now);
    snapshot.pending = pending;
    snapshot.running = std::move(running);
    snapshot.fair_share_half_life = setup.half_life;
    for (const model::Tenant& tenant : config.tenants) {
      placement::TenantUsage& u = snapshot.usage[tenant.metadata.name];
      u.decayed_gpu_hours = ledger.DecayedGpuHours(tenant.metadata.name);
      u.spent = Price(0);
      auto it = cloud_spent.find(tenant.metadata.name);
      u.cloud_spent = it == cloud_spent.end() ? Price(0) : it->second;
      u.spent = u.cloud_spent;  // on-prem is free: all spend is cloud spend
    }
    placement::Plan plan = placement::MakePlan(snapshot);
    ++run.plans;
    running = std::move(snapshot.running);
    std::vector<const model::Workload*> still;
    std::set<std::string> placed;
    for (const placement::Decision& d : plan.decisions) {
      run.alerts += static_cast<int64_t>(d.alerts.size());
      if (d.outcome != placement::Outcome::kPlaced) continue;
      const size_t j = index.at(d.workload);
      JobRun& r = run.jobs[j];
      r.cloud = d.binding.cluster == "cloud";
      r.start_ms = now + d.binding.ready_after.millis();
      r.end_ms = r.start_ms + jobs[j].duration_ms;
      placement::RunningWorkload rw;
      rw.workload = &workloads[j];
      rw.binding = d.binding;
      rw.started_at = Duration::FromMillis(now);
      running.push_back(std::move(rw));
      endings.push({r.end_ms, j});
      ledger.Hold(jobs[j].tenant, ledger.Held(jobs[j].tenant) + int64_t{r.gpus} * 1000);
      if (r.cloud) {
        auto [it, added] = cloud_spent.try_emplace(d.tenant, Price(0));
        it->second = it->second.Plus(d.cost);
      }
      placed.insert(d.workload);
      ++started;
    }
    idle_plans = placed.empty() && endings.empty() && next >= jobs.size() ? idle_plans + 1 : 0;
    if (idle_plans > 4) break;  // what is left can never run (callers drop such jobs)
    if (!placed.empty()) {
      for (const model::Workload* w : pending) {
        if (!placed.count(w->metadata.name)) still.push_back(w);
      }
      pending.swap(still);
    }
    if (progress) progress(run.strategy, started, jobs.size());
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

}  // namespace gpufed::replay
