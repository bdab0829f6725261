// gpufed-replay: trace replays of node-level packing policies.
//
//   gpufed-replay openb --nodes FILE --pods FILE [--seeds 42-51] [--policies LIST]
//                       [--format table|csv|seeds] [--placements FILE] [--reference FILE]
//                       [--threads N]
//
// Exit codes: 0 success, 2 bad input (unreadable or malformed files, bad options),
// 1 internal error.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "bench/replay/metrics.h"
#include "bench/replay/openb_experiment.h"
#include "bench/replay/openb_trace.h"
#include "bench/replay/philly_command.h"
#include "bench/replay/reference.h"
#include "bench/replay/report.h"
#include "controller/placement/packing/policy.h"

#ifndef GPUFED_BUILD_TYPE
#define GPUFED_BUILD_TYPE "unknown"
#endif

namespace gpufed::replay {
namespace {

struct OpenbOptions {
  std::string nodes;
  std::string pods;
  std::string seeds = "42-51";
  std::string policies = "random,firstfit,bestfit,dotprod,packing,clustering,fgd,gpufed";
  std::string format = "table";
  std::string placements;
  std::string reference;
  unsigned threads = 0;
};

int Fail(const Status& s, int code = 2) {
  std::cerr << "gpufed-replay: error: " << s.message() << "\n";
  return code;
}

std::string Today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S %Z", &tm);
  return buf;
}

int RunOpenbCommand(const OpenbOptions& opt) {
  const auto start = std::chrono::steady_clock::now();
  auto seeds = ParseSeeds(opt.seeds);
  if (!seeds.ok()) return Fail(seeds.status());
  auto policies = ParsePolicies(opt.policies);
  if (!policies.ok()) return Fail(policies.status());
  if (opt.format != "table" && opt.format != "csv" && opt.format != "seeds") {
    return Fail(InvalidArgument("--format must be table, csv or seeds"));
  }

  OpenbTrace trace;
  auto nodes = ReadOpenbNodes(opt.nodes);
  if (!nodes.ok()) return Fail(nodes.status());
  trace.nodes = std::move(*nodes);
  auto pods = ReadOpenbPods(opt.pods);
  if (!pods.ok()) return Fail(pods.status());
  trace.pods = std::move(*pods);
  if (auto fleet = packing::Fleet::Create(trace.nodes); !fleet.ok()) {
    return Fail(InvalidArgument(opt.nodes + ": " + fleet.status().message()));
  } else if (fleet->gpu_capacity_milli() == 0) {
    return Fail(InvalidArgument(opt.nodes + ": no GPUs in the node list"));
  }

  // Reference values: explicit file, else fgd_results/ beside the node list.
  ReferenceTable reference;
  std::string reference_path = opt.reference;
  if (reference_path.empty()) {
    const auto guess = std::filesystem::path(opt.nodes).parent_path() / "fgd_results" / "summary_gpu_alloc_by_policy.csv";
    std::error_code ec;
    if (std::filesystem::exists(guess, ec)) reference_path = guess.string();
  }
  if (!reference_path.empty()) {
    auto ref = ReadReference(reference_path);
    if (!ref.ok()) return Fail(ref.status());
    reference = std::move(*ref);
  }
  const std::string workload_name = std::filesystem::path(opt.pods).stem().string();

  const packing::WorkloadDistribution distribution = packing::WorkloadDistribution::FromPods(trace.pods);
  std::vector<SeedWorkload> workloads;
  for (uint64_t seed : *seeds) workloads.push_back(BuildSeedWorkload(trace, seed));

  // One job per (policy, seed); results land in fixed slots, so the output does
  // not depend on the number of threads or their timing.
  const size_t num_jobs = policies->size() * workloads.size();
  std::vector<Result<RunResult>> results(num_jobs, Result<RunResult>(Internal("not run")));
  unsigned threads = opt.threads > 0 ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, num_jobs));
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  std::mutex progress_mu;
  const bool tty = isatty(STDERR_FILENO) == 1;
  auto worker = [&] {
    for (size_t j = next++; j < num_jobs; j = next++) {
      const std::string& policy = (*policies)[j / workloads.size()];
      results[j] = RunOpenb(trace, workloads[j % workloads.size()], policy, distribution, !opt.placements.empty());
      const size_t finished = ++done;
      if (tty) {
        std::lock_guard<std::mutex> lock(progress_mu);
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::fprintf(stderr, "\r  openb %s: %zu/%zu runs done, %.0f s", workload_name.c_str(), finished, num_jobs, secs);
        if (finished == num_jobs) std::fprintf(stderr, "\n");
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  for (const auto& r : results) {
    if (!r.ok()) return Fail(r.status(), r.status().code() == StatusCode::kInternal ? 1 : 2);
  }

  std::vector<PolicyCurve> curves;
  for (size_t p = 0; p < policies->size(); ++p) {
    PolicyCurve c;
    c.policy = (*policies)[p];
    std::vector<std::vector<double>> per_seed;
    for (size_t s = 0; s < workloads.size(); ++s) {
      const RunResult& r = results[p * workloads.size() + s].value();
      per_seed.push_back(r.levels);
      c.placed += r.placed;
      c.failed += r.failed;
    }
    c.runs = static_cast<int>(workloads.size());
    c.levels = MeanCurve(per_seed);
    curves.push_back(std::move(c));
  }

  if (!opt.placements.empty()) {
    std::ofstream out(opt.placements, std::ios::trunc);
    if (!out) return Fail(InvalidArgument(opt.placements + ": cannot write placements file"));
    out << "policy,seed,order,pod,node,gpu_indices,gpu_milli_each\n";
    for (const auto& r : results) out << r.value().placements_csv;
    if (!out) return Fail(InvalidArgument(opt.placements + ": write failed"));
  }

  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (opt.format == "csv") {
    WriteCsv(std::cout, curves);
  } else if (opt.format == "seeds") {
    std::vector<SeedCurve> runs;
    for (size_t j = 0; j < results.size(); ++j) {
      const RunResult& r = results[j].value();
      runs.push_back({(*policies)[j / workloads.size()], workloads[j % workloads.size()].seed, r.levels, r.frag_levels});
    }
    WriteSeedCsv(std::cout, runs);
  } else {
    ReportHeader h;
    h.nodes_path = opt.nodes;
    h.pods_path = opt.pods;
    h.workload = workload_name;
    h.num_nodes = trace.nodes.size();
    h.num_pods = trace.pods.size();
    for (const auto& n : trace.nodes) h.num_gpus += n.num_gpu;
    h.seeds = opt.seeds + " (" + std::to_string(seeds->size()) + ")";
    h.cores = std::thread::hardware_concurrency();
    h.threads = threads;
    h.build_type = GPUFED_BUILD_TYPE;
    h.date = Today();
    h.elapsed_s = elapsed;
    h.reference_path = reference_path;
    const auto it = reference.find(workload_name);
    WriteTable(std::cout, h, curves, it == reference.end() ? nullptr : &it->second);
  }
  return 0;
}

}  // namespace
}  // namespace gpufed::replay

int main(int argc, char** argv) {
  using gpufed::replay::OpenbOptions;
  try {
    CLI::App app{"gpufed-replay: replay public traces through gpufed's packing policies"};
    app.require_subcommand(1);
    OpenbOptions opt;
    CLI::App* openb = app.add_subcommand("openb", "FGD paper's openb experiment (Alibaba GPU trace)");
    openb->add_option("--nodes", opt.nodes, "node list CSV (sn,cpu_milli,memory_mib,gpu,model)")->required();
    openb->add_option("--pods", opt.pods, "pod list CSV (name,cpu_milli,memory_mib,num_gpu,gpu_milli[,gpu_spec])")
        ->required();
    openb->add_option("--seeds", opt.seeds, "seeds: N, A-B or a comma list of those")->capture_default_str();
    openb->add_option("--policies", opt.policies, "comma-separated policy names")->capture_default_str();
    openb->add_option("--format", opt.format, "table, csv (means) or seeds (every run, with fragmentation)")
        ->capture_default_str();
    openb->add_option("--placements", opt.placements, "write every decision to this CSV file");
    openb->add_option("--reference", opt.reference,
                      "published results CSV (default: fgd_results/summary_gpu_alloc_by_policy.csv beside --nodes)");
    openb->add_option("--threads", opt.threads, "worker threads (default: hardware concurrency)");
    gpufed::replay::PhillyOptions philly_opt;
    CLI::App* philly = gpufed::replay::AddPhillyCommand(app, philly_opt);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      const int code = app.exit(e);
      return code == 0 ? 0 : 2;
    }
    if (philly->parsed()) return gpufed::replay::RunPhillyCommand(philly_opt);
    return gpufed::replay::RunOpenbCommand(opt);
  } catch (const std::exception& e) {
    std::cerr << "gpufed-replay: internal error: " << e.what() << "\n";
    return 1;
  }
}
