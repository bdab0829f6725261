#pragma once
// `gpufed run`'s closing summary of one process: what happened between the moment this
// process opened its store and its stop, the span its journal's controller-start and
// controller-stop records enclose. A restarted controller reports its own span only: its
// capacity is its own run time, and an attempt that began before it counts from its start.
#include <map>
#include <string>
#include <vector>

#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/common/status.h"
#include "controller/model/config.h"
#include "controller/reconcile/controller.h"
#include "controller/store/store.h"

namespace gpufed::cli {

// The process's span in controller time, and where the store stood at its start.
struct RunSpan {
  Duration start;
  Duration end;
  store::StoreMark mark;
  double wall_seconds = 0;  // the run's wall time (a simulated run covers more)
  bool wall_clock = false;  // controller times are Unix times, else virtual time
};

struct ProcessSummary {
  RunSpan span;
  int64_t submitted = 0;                // workloads accepted in this process
  std::map<std::string, int64_t> ended;  // terminal state -> workloads that reached it here
  int64_t requeued = 0;                 // attempts requeued here (lost or preempted)
  int64_t waiting_at_stop = 0;
  int64_t running_at_stop = 0;
  std::vector<double> wait_minutes;     // of the workloads first started here, sorted
  struct ClusterUse {
    std::string name;
    double used_gpu_seconds = 0;        // by attempts, within the span
    double offered_gpu_seconds = 0;     // GPUs observed on ready nodes x time (0: never observed)
    bool declared = true;               // by the active revision (else removed during the run)
  };
  std::vector<ClusterUse> clusters;
  MoneyTotals cost;                     // booked here (the journal's attempt-metered records)
  std::map<std::string, MoneyTotals> cost_per_tenant;
  std::map<std::string, int> metered_workloads_per_tenant;

  int64_t Ended(const std::string& state) const;
};

// Reads this process's share of the store: the attempts booked and the transitions
// written after `span.mark`, and the work still unfinished at the stop. `offered` is the
// GPU time each cluster offered during the span (Controller::OfferedGpuSeconds).
Result<ProcessSummary> SummarizeProcess(store::Store& store, const model::Config& config, const RunSpan& span,
                                        const std::map<std::string, double>& offered);

std::string RenderSummary(const ProcessSummary& summary, const reconcile::Controller::PassTimes& passes);

}  // namespace gpufed::cli
