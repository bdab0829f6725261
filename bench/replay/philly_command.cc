#include "bench/replay/philly_command.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <thread>

#include "bench/replay/philly_sim.h"

#ifndef GPUFED_BUILD_TYPE
#define GPUFED_BUILD_TYPE "unknown"
#endif

namespace gpufed::replay {
namespace {

int Fail(const std::string& message, int code = 2) {
  std::cerr << "gpufed-replay: error: " << message << "\n";
  return code;
}

// Seconds as written in the jobs file: whole seconds without decimals.
std::string Seconds(int64_t ms) {
  char buf[32];
  if (ms % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(ms / 1000));
  } else {
    std::snprintf(buf, sizeof buf, "%.3f", ms / 1000.0);
  }
  return buf;
}

std::string Human(double seconds) {
  char buf[32];
  if (seconds < 60) {
    std::snprintf(buf, sizeof buf, "%.0fs", seconds);
  } else if (seconds < 3600) {
    std::snprintf(buf, sizeof buf, "%.1fm", seconds / 60);
  } else {
    std::snprintf(buf, sizeof buf, "%.1fh", seconds / 3600);
  }
  return buf;
}

std::string Now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

}  // namespace

CLI::App* AddPhillyCommand(CLI::App& app, PhillyOptions& o) {
  CLI::App* cmd = app.add_subcommand("philly", "hybrid burst-to-cloud replay of the Philly job trace");
  cmd->add_option("--trace", o.trace, "philly.csv (timestamp,duration,num_gpus,gpu_time,cluster)")->required();
  cmd->add_option("--from", o.from, "first day of the window, YYYY-MM-DD (UTC)")->required();
  cmd->add_option("--days", o.days, "days of arrivals")->capture_default_str();
  cmd->add_option("--onprem-gpus", o.onprem_gpus, "on-prem GPUs (nodes of 8)")->required();
  cmd->add_option("--cloud-price", o.cloud_price, "cloud price per GPU-hour")->capture_default_str();
  cmd->add_option("--provision-delay", o.provision_delay, "cloud node provisioning delay")->capture_default_str();
  cmd->add_option("--burst-wait", o.burst_wait, "gpufed: class queue wait before bursting")->capture_default_str();
  cmd->add_option("--burst-depth", o.burst_depth, "gpufed: on-prem queue depth that allows bursting (0: off)")
      ->capture_default_str();
  cmd->add_option("--cloud-budget", o.cloud_budget,
                  "gpufed: cloud budget per tenant per week (default: half the on-prem GPU-hours of a week at the "
                  "cloud price, shared equally)");
  cmd->add_option("--half-life", o.half_life, "gpufed: fair-share usage half-life")->capture_default_str();
  cmd->add_option("--format", o.format, "table or csv")->capture_default_str();
  cmd->add_option("--jobs", o.jobs_file, "write every job (strategy,job,tenant,gpus,submit_s,start_s,end_s,cluster)");
  cmd->add_option("--state", o.state_dir,
                  "gpufed: keep the generated repository, the store and the audit journal here (default: a temporary "
                  "folder, removed)");
  cmd->add_flag("--durable", o.durable,
                "gpufed: fsync the store, journal and ledgers as on real clusters (default: unsynced, a simulation)");
  return cmd;
}

int RunPhillyCommand(const PhillyOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (o.format != "table" && o.format != "csv") return Fail("--format must be table or csv");
  if (o.days <= 0) return Fail("--days must be above 0");
  if (o.onprem_gpus <= 0) return Fail("--onprem-gpus must be above 0");
  if (o.cloud_price < 0) return Fail("--cloud-price must not be negative");
  std::optional<int64_t> from = o.from.size() == 10 ? ParsePhillyTime(o.from) : std::nullopt;
  if (!from) return Fail("--from: expected YYYY-MM-DD, got '" + o.from + "'");
  PhillySetup setup;
  setup.onprem_gpus = o.onprem_gpus;
  setup.cloud_price = o.cloud_price;
  setup.burst_depth = o.burst_depth;
  setup.cloud_budget = o.cloud_budget;
  setup.window_ms = int64_t{o.days} * 86400 * 1000;
  setup.state_dir = o.state_dir;
  setup.durable = o.durable;
  for (auto [text, out, name] : {std::tuple{&o.provision_delay, &setup.provision_delay, "--provision-delay"},
                                 std::tuple{&o.burst_wait, &setup.burst_wait, "--burst-wait"},
                                 std::tuple{&o.half_life, &setup.half_life, "--half-life"}}) {
    Result<Duration> d = Duration::Parse(*text);
    if (!d.ok()) return Fail(std::string(name) + ": " + d.status().message());
    *out = *d;
  }

  auto all = ReadPhillyWindow(o.trace, *from, o.days);
  if (!all.ok()) return Fail(all.status().message());
  // Jobs wider than the on-prem cluster could never run under onprem-only: left out of
  // every strategy so all three run the same jobs.
  std::vector<PhillyJob> jobs;
  size_t dropped = 0;
  const int onprem_nodes = o.onprem_gpus / kPhillyGpusPerNode;
  for (PhillyJob& j : *all) {
    const GangShape shape = ShapeOf(j.gpus);
    const bool fits = shape.members == 1 ? (shape.per_member <= std::min(o.onprem_gpus, kPhillyGpusPerNode))
                                         : shape.members <= onprem_nodes;
    if (fits) {
      jobs.push_back(std::move(j));
    } else {
      ++dropped;
    }
  }

  const bool tty = isatty(STDERR_FILENO) == 1;
  auto last = std::chrono::steady_clock::now();
  PhillyProgress progress = [&](const std::string& strategy, size_t done, size_t total) {
    if (!tty) return;
    const auto t = std::chrono::steady_clock::now();
    if (done < total && t - last < std::chrono::milliseconds(200)) return;
    last = t;
    const double secs = std::chrono::duration<double>(t - start).count();
    std::fprintf(stderr, "\r  philly %-16s %zu/%zu jobs started, %.0f s   ", strategy.c_str(), done, total, secs);
    if (done == total) std::fprintf(stderr, "\n");
  };
  std::vector<StrategyRun> runs;
  runs.push_back(RunOnpremOnly(jobs, setup, progress));
  runs.push_back(RunAlwaysCheapest(jobs, setup, progress));
  Result<StrategyRun> gpufed = RunGpufed(jobs, setup, progress);
  if (!gpufed.ok()) return Fail(gpufed.status().ToString(), 1);
  runs.push_back(std::move(gpufed).value());
  if (tty) std::fprintf(stderr, "\n");

  if (!o.jobs_file.empty()) {
    std::ofstream out(o.jobs_file, std::ios::trunc);
    if (!out) return Fail(o.jobs_file + ": cannot write the jobs file");
    out << "strategy,job,tenant,gpus,submit_s,start_s,end_s,cluster\n";
    for (const StrategyRun& run : runs) {
      for (const JobRun& r : run.jobs) {
        out << run.strategy << ",j" << r.job->line << "," << r.job->tenant << "," << r.gpus << ","
            << Seconds(r.job->submit_ms) << "," << (r.start_ms < 0 ? "" : Seconds(r.start_ms)) << ","
            << (r.end_ms < 0 ? "" : Seconds(r.end_ms)) << "," << (r.start_ms < 0 ? "" : r.cloud ? "cloud" : "onprem")
            << "\n";
      }
    }
    if (!out) return Fail(o.jobs_file + ": write failed");
  }

  std::vector<StrategySummary> summaries;
  for (const StrategyRun& run : runs) summaries.push_back(Summarize(run.strategy, run.jobs, setup));
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.format == "csv") {
    std::printf("strategy,jobs,mean_wait_s,p95_wait_s,mean_jct_s,onprem_util_pct,cloud_gpu_hours,cloud_cost\n");
    for (const StrategySummary& s : summaries) {
      std::printf("%s,%lld,%.1f,%.1f,%.1f,%.2f,%.2f,%.2f\n", s.strategy.c_str(), static_cast<long long>(s.jobs),
                  s.mean_wait_s, s.p95_wait_s, s.mean_jct_s, s.onprem_util_pct, s.cloud_gpu_hours, s.cloud_cost);
    }
    return 0;
  }
  std::printf("philly %s + %d days: %zu jobs (%zu wider than on-prem left out), on-prem %d GPUs, cloud %.2f/GPU-hour, "
              "provisioning %s\n",
              o.from.c_str(), o.days, jobs.size(), dropped, o.onprem_gpus, o.cloud_price,
              setup.provision_delay.ToString().c_str());
  std::printf("gpufed: burst after %s class wait%s, weekly cloud budget per tenant %s, fair-share half-life %s\n\n",
              setup.burst_wait.ToString().c_str(),
              o.burst_depth > 0 ? (" or depth " + std::to_string(o.burst_depth)).c_str() : "",
              o.cloud_budget >= 0 ? std::to_string(o.cloud_budget).c_str() : "default",
              setup.half_life.ToString().c_str());
  std::printf("%-16s %6s %10s %10s %10s %8s %11s %11s   %s\n", "strategy", "jobs", "mean wait", "p95 wait", "mean jct",
              "onprem%", "cloud GPU-h", "cloud cost", "tenant p95 wait (min..max)");
  for (size_t i = 0; i < summaries.size(); ++i) {
    const StrategySummary& s = summaries[i];
    std::printf("%-16s %6lld %10s %10s %10s %8.2f %11.1f %11.2f   %s..%s\n", s.strategy.c_str(),
                static_cast<long long>(s.jobs), Human(s.mean_wait_s).c_str(), Human(s.p95_wait_s).c_str(),
                Human(s.mean_jct_s).c_str(), s.onprem_util_pct, s.cloud_gpu_hours, s.cloud_cost,
                Human(s.tenant_p95_min_s).c_str(), Human(s.tenant_p95_max_s).c_str());
  }
  std::printf("\ngpufed: %lld passes, %lld budget alerts; run times %.1f / %.1f / %.1f s; total %.1f s on %u cores, "
              "storage %s, build %s, %s\n",
              static_cast<long long>(runs[2].plans), static_cast<long long>(runs[2].alerts), runs[0].seconds,
              runs[1].seconds, runs[2].seconds, elapsed, std::thread::hardware_concurrency(),
              o.durable ? "durable" : "unsynced", GPUFED_BUILD_TYPE,
              Now().c_str());
  return 0;
}

}  // namespace gpufed::replay
