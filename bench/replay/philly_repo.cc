#include "bench/replay/philly_repo.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

namespace gpufed::replay {
namespace {

// Whole milliseconds as a duration the loader reads back exactly.
std::string Millis(int64_t ms) { return std::to_string(ms) + "ms"; }

std::string Amount(double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", value);
  return buf;
}

std::string Pool(const std::string& name, int count) {
  return "    - {name: " + name + ", count: " + std::to_string(count) + ", gpu: {model: GPU, count: " +
         std::to_string(kPhillyGpusPerNode) + ", memory: 32Gi}}\n";
}

Status WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Unavailable("write " + path.string());
  return Status::Ok();
}

std::string Fleet(const std::vector<PhillyJob>& jobs, const PhillySetup& setup) {
  std::string y =
      "# The Philly hybrid-burst experiment (written by gpufed-replay philly).\n"
      "apiVersion: gpufed/v1alpha1\nkind: Cluster\nmetadata: {name: onprem}\nspec:\n"
      "  provider: onprem\n  zone: local\n  connector: {type: sim}\n  nodePools:\n";
  if (setup.onprem_gpus / kPhillyGpusPerNode > 0) y += Pool("n", setup.onprem_gpus / kPhillyGpusPerNode);
  if (setup.onprem_gpus % kPhillyGpusPerNode > 0) {
    // The remainder node has fewer GPUs than the others.
    y += "    - {name: r, count: 1, gpu: {model: GPU, count: " + std::to_string(setup.onprem_gpus % kPhillyGpusPerNode) +
         ", memory: 32Gi}}\n";
  }
  // Owned hardware is a sunk cost: on-prem GPU-hours are free here.
  y += "  pricing: {currency: USD, gpuHour: {GPU: \"0\"}, egressPerGiB: \"0\"}\n";
  y += "---\napiVersion: gpufed/v1alpha1\nkind: Cluster\nmetadata: {name: cloud}\nspec:\n"
       "  provider: cloud\n  zone: local\n  connector: {type: sim}\n  nodePools:\n" +
       Pool("c", 0) + "  elasticity: {maxNodes: 100000, provisionDelay: " + Millis(setup.provision_delay.millis()) +
       ", idleTimeout: 0s}\n  pricing: {currency: USD, gpuHour: {GPU: \"" + Amount(setup.cloud_price) +
       "\"}, egressPerGiB: \"0\"}\n";
  y += "---\napiVersion: gpufed/v1alpha1\nkind: Policy\nmetadata: {name: burst}\nspec:\n  burst: {queueWait: " +
       Millis(setup.burst_wait.millis());
  if (setup.burst_depth > 0) y += ", queueDepth: " + std::to_string(setup.burst_depth);
  y += "}\n";
  std::set<std::string> tenants;
  for (const PhillyJob& j : jobs) tenants.insert(j.tenant);
  // Default weekly cloud budget per tenant: half the on-prem fleet's weekly GPU-hours at
  // the cloud price, shared equally.
  const double budget = setup.cloud_budget >= 0 ? setup.cloud_budget
                                                : 0.5 * setup.onprem_gpus * 168 * setup.cloud_price /
                                                      static_cast<double>(std::max<size_t>(1, tenants.size()));
  for (const std::string& t : tenants) {
    y += "---\napiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: " + t +
         "}\nspec:\n  weight: 1\n  budget: {period: weekly, cloudLimit: \"" + Amount(budget) +
         " USD\", alertAt: [0.8, 1.0]}\n";
  }
  return y;
}

// Jobs per submissions file: the loader reads at most 10,000 documents from one file.
constexpr size_t kJobsPerFile = 5000;

std::string Jobs(const std::vector<PhillyJob>& jobs, size_t first, size_t last) {
  std::string y;
  y.reserve((last - first) * 200);
  for (size_t i = first; i < last; ++i) {
    const PhillyJob& j = jobs[i];
    const GangShape shape = ShapeOf(j.gpus);
    const std::string resources = shape.members > 1 ? "{nodes: " + std::to_string(shape.members) +
                                                          ", gpusPerNode: " + std::to_string(shape.per_member) + "}"
                                                    : "{gpus: " + std::to_string(shape.per_member) + "}";
    y += "---\napiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: " + PhillyWorkloadName(j) +
         "}\nspec: {tenant: " + j.tenant + ", type: training, resources: " + resources +
         ", durationHint: " + Millis(std::max<int64_t>(j.duration_ms, 1)) + ", submittedAt: " + Millis(j.submit_ms) +
         "}\n";
  }
  return y;
}

}  // namespace

std::string PhillyWorkloadName(const PhillyJob& job) { return "j" + std::to_string(job.line); }

Status WritePhillyRepository(const std::string& dir, const std::vector<PhillyJob>& jobs, const PhillySetup& setup) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "simulation", ec);
  if (ec) return Unavailable("create " + dir + "/simulation: " + ec.message());
  GPUFED_RETURN_IF_ERROR(WriteFile(fs::path(dir) / "fleet.yaml", Fleet(jobs, setup)));
  std::string scenario = "# The trace window's jobs, each submitted at its trace time.\nsubmissions:\n";
  for (size_t first = 0, n = 1; first < jobs.size(); first += kJobsPerFile, ++n) {
    char name[32];
    std::snprintf(name, sizeof name, "jobs-%03zu.yaml", n);
    GPUFED_RETURN_IF_ERROR(WriteFile(fs::path(dir) / "simulation" / name,
                                     Jobs(jobs, first, std::min(jobs.size(), first + kJobsPerFile))));
    scenario += std::string("  - ") + name + "\n";
  }
  if (jobs.empty()) scenario += "  []\n";
  GPUFED_RETURN_IF_ERROR(WriteFile(fs::path(dir) / "simulation" / "scenario.yaml", scenario));
  return WriteFile(fs::path(dir) / ".gpufedignore", "# Not policy resources: the scenario gpufed run plays.\nsimulation\n");
}

}  // namespace gpufed::replay
