#pragma once
// Command-line parsing helpers and the two output formats of gpufed-replay openb.
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "controller/common/status.h"

namespace gpufed::replay {

// "42-51", "7", "1,3,10-12". InvalidArgument for anything else or an empty set.
Result<std::vector<uint64_t>> ParseSeeds(const std::string& text);
// Comma-separated known policy names, in order, duplicates dropped.
Result<std::vector<std::string>> ParsePolicies(const std::string& text);

struct PolicyCurve {
  std::string policy;
  std::vector<double> levels;  // mean allocation % at arrived 0..130
  int64_t placed = 0;
  int64_t failed = 0;
  int runs = 0;  // seeds behind the means
};

// Header line then `policy,arrived_pct,alloc_pct_mean` for every policy and level 0..130.
void WriteCsv(std::ostream& out, const std::vector<PolicyCurve>& curves);

// One (policy, seed) run's curves, for --format seeds.
struct SeedCurve {
  std::string policy;
  uint64_t seed = 0;
  std::vector<double> levels;       // allocation % at arrived 0..130
  std::vector<double> frag_levels;  // fragmentation % (FGD's measure) at arrived 0..130
};

// Header line then `policy,seed,arrived_pct,alloc_pct,frag_pct` for every run and level
// 0..130: what the means hide (the worst seed) and the fragmentation beside allocation.
void WriteSeedCsv(std::ostream& out, const std::vector<SeedCurve>& runs);

struct ReportHeader {
  std::string nodes_path, pods_path, workload, reference_path, seeds, build_type, date;
  size_t num_nodes = 0, num_pods = 0;
  int64_t num_gpus = 0;
  unsigned cores = 0, threads = 0;
  double elapsed_s = 0;
};

// Human-readable table at the levels the FGD paper reports (80..130), with the
// published value and our difference under each policy it covers.
void WriteTable(std::ostream& out, const ReportHeader& h, const std::vector<PolicyCurve>& curves,
                const std::map<std::string, std::map<int, double>>* reference);

}  // namespace gpufed::replay
