#include "controller/cli/run_summary.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "controller/common/action_key.h"
#include "controller/common/time_text.h"

namespace gpufed::cli {
namespace {

// Seconds of [a0, a1] that fall within [b0, b1].
double OverlapSeconds(Duration a0, Duration a1, Duration b0, Duration b1) {
  const int64_t from = std::max(a0.millis(), b0.millis());
  const int64_t to = std::min(a1.millis(), b1.millis());
  return to > from ? static_cast<double>(to - from) / 1000.0 : 0.0;
}

// The part of a booked attempt's GPU time that fell within the span: its GPU-seconds
// spread evenly over its run. An attempt with no run time counts where it ended.
double UsedWithin(const store::AttemptRow& a, const RunSpan& span) {
  const double run = static_cast<double>(a.finished.millis() - a.started.millis()) / 1000.0;
  if (run <= 0) return a.finished >= span.start && a.finished <= span.end ? a.gpu_seconds : 0.0;
  return a.gpu_seconds * OverlapSeconds(a.started, a.finished, span.start, span.end) / run;
}

// GPU time in a unit that suits its size (a short run's capacity is minutes, not hours).
struct GpuTimeUnit {
  double seconds;
  const char* name;
};
GpuTimeUnit UnitFor(double gpu_seconds) {
  if (gpu_seconds >= 36000) return {3600, "GPU-h"};
  if (gpu_seconds >= 600) return {60, "GPU-min"};
  return {1, "GPU-s"};
}

std::string SpanLine(const RunSpan& span) {
  const Duration length = Duration::FromMillis(span.end.millis() - span.start.millis());
  std::ostringstream out;
  out << "this process: " << FormatControllerMillis(span.start.millis()) << " to "
      << FormatControllerMillis(span.end.millis()) << " (";
  if (span.wall_clock) {
    out << length.ToString() << " of wall-clock time";
  } else {
    out << length.ToString() << " of virtual time in " << static_cast<int64_t>(span.wall_seconds * 1000)
        << " ms wall time";
  }
  out << ")\n";
  return out.str();
}

}  // namespace

int64_t ProcessSummary::Ended(const std::string& state) const {
  auto it = ended.find(state);
  return it == ended.end() ? 0 : it->second;
}

Result<ProcessSummary> SummarizeProcess(store::Store& store, const model::Config& config, const RunSpan& span,
                                        const std::map<std::string, double>& offered) {
  ProcessSummary s;
  s.span = span;
  Result<store::TransitionsAfterMark> moved = store.TransitionsAfter(span.mark);
  if (!moved.ok()) return moved.status();
  for (const auto& [state, n] : moved->entered) {
    Result<store::WorkloadState> parsed = store::ParseState(state);
    if (!parsed.ok()) continue;
    if (*parsed == store::WorkloadState::kPending) s.submitted += n;
    if (*parsed == store::WorkloadState::kRequeued) s.requeued += n;
    if (store::IsTerminal(*parsed)) s.ended[state] += n;
  }
  std::map<std::string, double> used;  // GPU-seconds per cluster within the span
  Result<std::vector<store::AttemptRow>> booked = store.AttemptsAfter(span.mark);
  if (!booked.ok()) return booked.status();
  std::map<std::string, std::set<std::string>> metered_uids;
  for (const store::AttemptRow& a : *booked) {
    used[a.cluster] += UsedWithin(a, span);
    s.cost.Add(a.cost);
    s.cost_per_tenant[a.tenant].Add(a.cost);
    metered_uids[a.tenant].insert(a.uid);
  }
  for (const auto& [tenant, uids] : metered_uids)
    s.metered_workloads_per_tenant[tenant] = static_cast<int>(uids.size());
  // Attempts still running at the stop: from when they began to run, or from this
  // process's start for those it found running.
  Result<std::vector<store::WorkloadRecord>> unfinished = store.ListUnfinished();
  if (!unfinished.ok()) return unfinished.status();
  for (const store::WorkloadRecord& r : *unfinished) {
    if (store::IsWaiting(r.state)) ++s.waiting_at_stop;
    if (!store::IsActive(r.state)) continue;
    ++s.running_at_stop;
    if (r.state != store::WorkloadState::kRunning) continue;
    auto began = moved->running_since.find(r.ActionKey());
    const Duration since = began == moved->running_since.end() ? span.start : std::max(began->second, span.start);
    used[r.cluster] +=
        static_cast<double>(r.gpu_milli) / 1000.0 * OverlapSeconds(since, span.end, span.start, span.end);
  }
  Result<std::vector<store::WorkloadRecord>> all = store.List("");
  if (!all.ok()) return all.status();
  for (const store::WorkloadRecord& r : *all) {
    const bool ran = r.started.millis() > 0 || r.state == store::WorkloadState::kSucceeded;
    if (!ran || r.started < span.start) continue;  // first started by an earlier process
    s.wait_minutes.push_back(static_cast<double>(std::max<int64_t>(0, r.started.millis() - r.submitted.millis())) /
                             60000.0);
  }
  std::sort(s.wait_minutes.begin(), s.wait_minutes.end());
  // Every cluster the revision declares, and any other that offered or ran work here
  // (removed by a revision during the run).
  std::set<std::string> declared;
  std::map<std::string, ProcessSummary::ClusterUse> by_name;
  for (const model::Cluster& c : config.clusters) {
    declared.insert(c.metadata.name);
    by_name[c.metadata.name];
  }
  for (const auto& [name, seconds] : offered) by_name[name].offered_gpu_seconds = seconds;
  for (const auto& [name, seconds] : used) by_name[name].used_gpu_seconds = seconds;
  for (auto& [name, use] : by_name) {
    use.name = name;
    use.declared = declared.count(name) > 0;
    if (use.declared || use.used_gpu_seconds > 0 || use.offered_gpu_seconds > 0) s.clusters.push_back(use);
  }
  return s;
}

std::string RenderSummary(const ProcessSummary& s, const reconcile::Controller::PassTimes& passes) {
  std::ostringstream out;
  char line[256];
  const double span_seconds = static_cast<double>(s.span.end.millis() - s.span.start.millis()) / 1000.0;
  const char* time_base = s.span.wall_clock ? "wall-clock" : "virtual";
  out << "\n== gpufed run summary (this process) ==\n" << SpanLine(s.span);
  out << "workloads: " << s.submitted << " submitted; ended:";
  for (const char* state : {"Succeeded", "Failed", "Rejected", "Cancelled"})
    out << " " << state << " " << s.Ended(state);
  out << "; " << s.requeued << " attempts requeued (lost or preempted)\n";
  out << "at the stop: " << s.waiting_at_stop << " waiting, " << s.running_at_stop << " placed or running\n";
  const int64_t succeeded = s.Ended("Succeeded");
  const double hours = span_seconds / 3600.0;
  std::snprintf(line, sizeof line, "throughput: %.2f succeeded workloads per hour of %s time\n",
                hours > 0 ? static_cast<double>(succeeded) / hours : 0.0, time_base);
  out << line;
  double mean = 0;
  for (double w : s.wait_minutes) mean += w;
  mean = s.wait_minutes.empty() ? 0 : mean / static_cast<double>(s.wait_minutes.size());
  const double p95 =
      s.wait_minutes.empty()
          ? 0
          : s.wait_minutes[std::min(s.wait_minutes.size() - 1, static_cast<size_t>(s.wait_minutes.size() * 0.95))];
  std::snprintf(line, sizeof line, "wait before start: mean %.1f min, p95 %.1f min (%zu first started here)\n", mean,
                p95, s.wait_minutes.size());
  out << line;
  out << "GPU utilisation (GPU time used / GPU time the cluster offered: the GPUs each pass observed, held to the "
         "next):\n";
  for (const ProcessSummary::ClusterUse& c : s.clusters) {
    const double capacity = c.offered_gpu_seconds;
    const GpuTimeUnit unit = UnitFor(capacity > 0 ? capacity : c.used_gpu_seconds);
    const char* note = c.declared ? "" : "  (no longer declared)";
    if (capacity <= 0) {
      std::snprintf(line, sizeof line, "  %-12s %8.1f %s, not observed in this process%s\n", c.name.c_str(),
                    c.used_gpu_seconds / unit.seconds, unit.name, note);
    } else {
      std::snprintf(line, sizeof line, "  %-12s %8.1f %s of %8.1f %s  %5.1f%%%s\n", c.name.c_str(),
                    c.used_gpu_seconds / unit.seconds, unit.name, capacity / unit.seconds, unit.name,
                    100 * c.used_gpu_seconds / capacity, note);
    }
    out << line;
  }
  std::snprintf(line, sizeof line, "reconcile: %lld passes, mean %.2f ms per pass (p50 %.2f ms, p99 %.2f ms)\n",
                static_cast<long long>(passes.passes), passes.mean * 1000, passes.p50 * 1000, passes.p99 * 1000);
  out << line;
  // Money in the currency's minor units ("1,662.67 EUR"); `gpufed audit report --chargeback`
  // over this process's span gives the exact amounts.
  out << "cost: total " << s.cost.ToDisplayString();
  if (succeeded > 0) out << ", per succeeded job " << s.cost.DividedBy(succeeded).ToDisplayString();
  out << "\n";
  for (const auto& [tenant, money] : s.cost_per_tenant) {
    auto n = s.metered_workloads_per_tenant.find(tenant);
    const int jobs = n == s.metered_workloads_per_tenant.end() ? 0 : n->second;
    out << "  " << tenant << ": " << money.ToDisplayString() << " (" << jobs << " workloads metered, "
        << money.DividedBy(std::max(1, jobs)).ToDisplayString() << " per workload)\n";
  }
  return out.str();
}

}  // namespace gpufed::cli
