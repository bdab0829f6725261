#pragma once
// Hybrid-burst simulation on the Philly trace: an on-prem cluster of fixed size and an
// elastic cloud with a price per GPU-hour and a provisioning delay, under three
// strategies. Virtual time only; the same inputs give the same schedule.
//
//   onprem-only      on-prem, first come first served with backfill (no cloud)
//   always-cheapest  on-prem when a job fits now, else the cloud at once
//   gpufed           the product: the window as a repository (philly_repo.h) played by
//                    the real runtime (reconcile loop, store, audit journal) with sim
//                    connectors in virtual time: on-prem first, burst after the class
//                    queue wait, weighted fair share over a decaying window, weekly
//                    per-tenant cloud budgets
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/replay/philly_trace.h"
#include "controller/common/duration.h"

namespace gpufed::replay {

inline constexpr int kPhillyGpusPerNode = 8;

struct PhillySetup {
  int onprem_gpus = 0;
  double cloud_price = 3.0;                           // per GPU-hour
  Duration provision_delay = Duration::FromSeconds(300);
  Duration burst_wait = Duration::FromSeconds(900);   // gpufed: class queue wait before bursting
  int burst_depth = 0;                                // gpufed: queue depth that allows bursting; 0 = off
  double cloud_budget = -1;                           // gpufed: per tenant per week; < 0 = default
  Duration half_life = Duration::FromSeconds(24 * 3600);
  int64_t window_ms = 0;                              // the trace window (for utilisation)
  std::string state_dir;                              // gpufed: keep the store and journal here; "" = temporary
  bool durable = false;                               // gpufed: fsync as on real clusters (else kUnsynced)
};

// Where and when one job ran.
struct JobRun {
  const PhillyJob* job = nullptr;
  int gpus = 0;                // allocated (gangs round up to whole members)
  int64_t start_ms = -1;       // -1: never started
  int64_t end_ms = -1;
  bool cloud = false;
};

struct StrategyRun {
  std::string strategy;
  std::vector<JobRun> jobs;    // in the order of the input jobs
  int64_t plans = 0;           // reconcile passes (gpufed)
  int64_t alerts = 0;          // budget alerts raised (gpufed)
  double seconds = 0;          // wall time
};

struct StrategySummary {
  std::string strategy;
  int64_t jobs = 0;
  double mean_wait_s = 0, p95_wait_s = 0, mean_jct_s = 0;
  double onprem_util_pct = 0, cloud_gpu_hours = 0, cloud_cost = 0;
  double tenant_p95_min_s = 0, tenant_p95_max_s = 0;  // spread of per-tenant p95 waits
};

// Gang shape of a trace job: members x GPUs per member (members > 1 only above 8 GPUs).
struct GangShape {
  int members = 1;
  int per_member = 0;
  int total() const { return members * per_member; }
};
GangShape ShapeOf(int gpus);

// Progress: (strategy, jobs started so far, total jobs).
using PhillyProgress = std::function<void(const std::string&, size_t, size_t)>;

StrategyRun RunOnpremOnly(const std::vector<PhillyJob>& jobs, const PhillySetup& setup, const PhillyProgress& progress);
StrategyRun RunAlwaysCheapest(const std::vector<PhillyJob>& jobs, const PhillySetup& setup,
                              const PhillyProgress& progress);
// Errors: the repository could not be written, or the runtime failed (named).
Result<StrategyRun> RunGpufed(const std::vector<PhillyJob>& jobs, const PhillySetup& setup,
                              const PhillyProgress& progress);

// Figures from the schedule alone (also used to recompute them from a --jobs file).
StrategySummary Summarize(const std::string& strategy, const std::vector<JobRun>& runs, const PhillySetup& setup);
// Nearest-rank percentile (p in 0..100) of `values`; 0 when empty.
double Percentile(std::vector<double> values, double p);

}  // namespace gpufed::replay
