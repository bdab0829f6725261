#pragma once
// `gpufed-replay philly`: the hybrid-burst experiment on the Philly trace.
#include <string>

#include <CLI/CLI.hpp>

namespace gpufed::replay {

struct PhillyOptions {
  std::string trace;
  std::string from;
  int days = 7;
  int onprem_gpus = 0;
  double cloud_price = 3.0;
  std::string provision_delay = "5m";
  std::string burst_wait = "15m";
  int burst_depth = 0;
  double cloud_budget = -1;
  std::string half_life = "24h";
  std::string format = "table";
  std::string jobs_file;
  std::string state_dir;
  // gpufed: fsync the store, journal and ledgers as `gpufed run` does on real clusters.
  // Off by default: a replay is a simulation that can be run again, and on a slow disk
  // the waits for it would be most of the run (bench/README.md).
  bool durable = false;
};

// Registers the subcommand on `app`; options land in `options`, which must outlive parsing.
CLI::App* AddPhillyCommand(CLI::App& app, PhillyOptions& options);
// Runs it. Exit codes: 0 success, 2 bad input, 1 internal error.
int RunPhillyCommand(const PhillyOptions& options);

}  // namespace gpufed::replay
