#pragma once
// The Philly experiment as a gpufed repository: what a platform team would write for
// it. An on-prem sim Cluster of 8-GPU nodes, an elastic sim cloud billed per GPU-hour,
// one Tenant per virtual cluster with a weekly cloud budget, a burst Policy, and the
// window's jobs as a simulation scenario of Workloads submitted at their trace times.
// `gpufed run --config DIR` and `gpufed validate DIR` take the folder as it is.
#include <string>
#include <vector>

#include "bench/replay/philly_sim.h"
#include "controller/common/status.h"

namespace gpufed::replay {

// Writes the repository into `dir` (created; files of the same names are replaced):
// fleet.yaml, simulation/scenario.yaml, simulation/jobs-NNN.yaml (5,000 jobs each: the
// loader reads at most 10,000 documents from one file) and .gpufedignore.
Status WritePhillyRepository(const std::string& dir, const std::vector<PhillyJob>& jobs, const PhillySetup& setup);

// The workload name of a trace job ("j<line>"), as the jobs file and the store call it.
std::string PhillyWorkloadName(const PhillyJob& job);

}  // namespace gpufed::replay
