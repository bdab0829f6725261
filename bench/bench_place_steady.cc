// Placement in a controller's steady state: 1,000 clusters (bench/fleet.h), P workloads
// pending in every pass, and the running work of earlier passes reserved. 50 passes in a
// row; between passes about 5 % of the work finishes (running work, chosen at random,
// seeded) and as many new workloads arrive (the pending set is topped up to P again).
// Before the timed passes one untimed plan fills the fleet with 20 x P running workloads,
// so each pass places about as much as finished before it: the shape of a controller
// that has been up for a while and plans what arrived since its last pass. The warm-up
// plans with the tracker's mix too (`gpufed run` has one from its first pass), so the
// timed passes refit for a new mix only when the work drifts (`mix_refreshes`, counted
// over the timed passes).
//
// Each pass plans as `gpufed run` does: with a PlanMemo kept from the pass before
// (plan_memo.h), and with the pod mix the loop's PodMixTracker publishes (refreshed only
// when the work drifts; the tracker runs outside the clock, as it runs outside the plan).
// The clock covers MakePlan only; p50/p99 are the gaps between consecutive decisions of
// all passes (the first decision of a pass includes setting up the clusters).
// `rebuilt_per_pass` and `fits_per_pass` say how much the memo did not keep;
// `refit_pass_ms` times one further pass (untimed) after a mix refresh, when no fit is
// fresh: the steady state's worst pass. `plans_digest` hashes every decision as the store keeps it
// (outcome, binding, cost, reason, verdicts and groups): equal digests before and after
// a change to the placer mean it placed and explained every workload alike.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench/fleet.h"
#include "controller/common/hash64.h"
#include "controller/placement/plan.h"
#include "controller/reconcile/decision_log.h"
#include "controller/reconcile/pod_mix_tracker.h"

namespace {

namespace model = gpufed::model;
namespace placement = gpufed::placement;
using gpufed::Duration;

constexpr int kPasses = 50;
constexpr int kRunningPerPending = 20;  // running work is 20 x P, so 5 % of it is ~P
constexpr int kFinishPercent = 5;
constexpr int64_t kPassInterval_ms = 10'000;  // virtual time between passes

class SteadyState {
 public:
  SteadyState(gpufed::bench::Fleet& fleet, int pending) : fleet_(fleet), pending_target_(pending) {}

  // Every request pending and running now (what the loop feeds its PodMixTracker).
  std::vector<const model::ResourceRequest*> Work() const {
    std::vector<const model::ResourceRequest*> work;
    for (const model::Workload* w : pending_) work.push_back(&w->resources);
    for (const placement::RunningWorkload& r : running_) work.push_back(&r.workload->resources);
    return work;
  }

  // Plans once over `snapshot` (pending filled in here) and applies the plan: placed work
  // runs, rejected work leaves, queued work waits for the next pass.
  placement::Plan Plan(placement::Snapshot& snapshot) {
    snapshot.config = &fleet_.config;
    snapshot.pending = pending_;
    snapshot.running = running_;
    snapshot.now = now_;
    return placement::MakePlan(snapshot);
  }

  void Apply(const placement::Plan& plan) {
    std::vector<const model::Workload*> still;
    for (const placement::Decision& d : plan.decisions) {
      const model::Workload* w = by_name_.at(d.workload);
      if (d.outcome == placement::Outcome::kPlaced) {
        running_.push_back({w, d.binding, now_, Duration(), 1});
      } else if (d.outcome == placement::Outcome::kQueued) {
        still.push_back(w);
      }
    }
    pending_ = std::move(still);
  }

  // Between passes: ~5 % of the running work finishes, as many new workloads arrive
  // (the pending set is topped up to its target), and virtual time moves on.
  void Churn() {
    const size_t finish = running_.size() * kFinishPercent / 100;
    for (size_t i = 0; i < finish && !running_.empty(); ++i) {
      const size_t victim = fleet_.rng() % running_.size();
      running_[victim] = std::move(running_.back());
      running_.pop_back();
    }
    Arrive(std::max<int>(static_cast<int>(finish), pending_target_ - static_cast<int>(pending_.size())), true);
    now_ = Duration::FromMillis(now_.millis() + kPassInterval_ms);
  }

  // `count` new workloads; with `cap`, no more than the pending target holds.
  void Arrive(int count, bool cap) {
    if (cap) count = std::min(count, pending_target_ - static_cast<int>(pending_.size()));
    for (int i = 0; i < count; ++i) {
      model::Workload& w = workloads_.emplace_back(gpufed::bench::MakeWorkload(next_++, fleet_.rng));
      w.submitted_at = now_;
      by_name_[w.metadata.name] = &w;
      pending_.push_back(&w);
    }
  }

  size_t running() const { return running_.size(); }

 private:
  gpufed::bench::Fleet& fleet_;
  const int pending_target_;
  std::deque<model::Workload> workloads_;  // stable addresses for the snapshots
  std::unordered_map<std::string, const model::Workload*> by_name_;
  std::vector<const model::Workload*> pending_;
  std::vector<placement::RunningWorkload> running_;
  Duration now_;
  int next_ = 1'000'000;  // names after the fleet's own
};

void PlanSteady(benchmark::State& state, bool with_lua) {
  const int clusters = static_cast<int>(state.range(0));
  const int pending = static_cast<int>(state.range(1));
  std::unique_ptr<gpufed::bench::Fleet> fleet = gpufed::bench::BuildFleet(clusters, 0);
  if (!fleet->hooks) {
    state.SkipWithError("stdlib policies did not compile");
    return;
  }
  std::vector<double> latencies;
  int64_t decisions = 0;
  size_t running = 0;
  double rebuilt = 0, fits = 0, refreshes = 0, refit_pass_ms = 0, refit_decisions = 0;
  gpufed::Hash64 digest;
  for (auto _ : state) {
    state.PauseTiming();
    SteadyState steady(*fleet, pending);
    placement::PlanMemo memo;
    placement::Snapshot snapshot;
    snapshot.hooks = with_lua ? fleet->hooks.get() : nullptr;
    snapshot.memo = &memo;
    // Warm-up: the fleet fills with running work (untimed). It plans with the tracker's
    // mix, as every pass of `gpufed run` does, so the timed passes see the mix the
    // controller had before them and refit only when the work drifts.
    gpufed::reconcile::PodMixTracker mix;
    steady.Arrive(pending * kRunningPerPending, false);
    snapshot.pod_mix = mix.Update(steady.Work());
    steady.Apply(steady.Plan(snapshot));
    steady.Churn();
    steady.Arrive(pending, true);
    const int64_t warm_up_refreshes = mix.refreshes();
    latencies.clear();
    auto last = std::chrono::steady_clock::now();
    snapshot.on_decision = [&](const placement::Decision&) {
      const auto t = std::chrono::steady_clock::now();
      latencies.push_back(std::chrono::duration<double, std::micro>(t - last).count());
      last = t;
    };
    for (int pass = 0; pass < kPasses; ++pass) {
      snapshot.pod_mix = mix.Update(steady.Work());
      state.ResumeTiming();
      last = std::chrono::steady_clock::now();
      placement::Plan plan = steady.Plan(snapshot);
      state.PauseTiming();
      decisions += static_cast<int64_t>(plan.decisions.size());
      rebuilt += static_cast<double>(memo.last_plan().clusters_rebuilt) / kPasses;
      fits += static_cast<double>(memo.last_plan().fits_found) / kPasses;
      for (const placement::Decision& d : plan.decisions) {
        digest.Add(gpufed::reconcile::DecisionToJson(d, gpufed::reconcile::DecisionContext{}).dump());
      }
      steady.Apply(plan);
      steady.Churn();
    }
    snapshot.on_decision = nullptr;
    running = steady.running();
    refreshes = static_cast<double>(mix.refreshes() - warm_up_refreshes);
    // One more pass (untimed, not in the digest) with the mix refreshed, as when the work
    // drifts: every cluster's fits are stale, so it is the steady state's worst pass.
    snapshot.pod_mix = gpufed::reconcile::PodMixTracker(0).Update(steady.Work());
    const auto refit_start = std::chrono::steady_clock::now();
    const placement::Plan refit = steady.Plan(snapshot);
    refit_pass_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - refit_start).count();
    refit_decisions = static_cast<double>(refit.decisions.size());
    state.ResumeTiming();
  }
  gpufed::bench::ReportDecisions(state, decisions, latencies);
  state.counters["running"] = static_cast<double>(running);
  state.counters["rebuilt_per_pass"] = rebuilt;
  state.counters["fits_per_pass"] = fits;
  state.counters["mix_refreshes"] = refreshes;
  state.counters["refit_pass_ms"] = refit_pass_ms;
  state.counters["refit_pass_decisions"] = refit_decisions;
  // 2^53 and below: a double holds it exactly.
  state.counters["plans_digest"] = static_cast<double>(digest.value() >> 11);
}

void BM_PlaceFleetSteadyYamlRules(benchmark::State& state) { PlanSteady(state, false); }
void BM_PlaceFleetSteadyYamlAndLua(benchmark::State& state) { PlanSteady(state, true); }

// {clusters, pending per pass}.
BENCHMARK(BM_PlaceFleetSteadyYamlRules)->Args({10, 20})->Args({1000, 200})->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_PlaceFleetSteadyYamlAndLua)->Args({10, 20})->Args({1000, 200})->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
