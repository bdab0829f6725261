#include "controller/placement/packing/policy.h"

#include "controller/placement/packing/policy_internal.h"

namespace gpufed::packing {

const std::vector<std::string>& PackingPolicyNames() {
  static const std::vector<std::string> kNames = {"random",  "firstfit",   "bestfit", "dotprod",
                                                  "packing", "clustering", "fgd",     "gpufed"};
  return kNames;
}

Result<std::unique_ptr<PackingPolicy>> MakePackingPolicy(std::string_view name, uint64_t seed,
                                                         const WorkloadDistribution& workload) {
  using namespace internal;  // NOLINT: factory functions only
  std::unique_ptr<PackingPolicy> p;
  if (name == "random") {
    p = MakeRandomPolicy(seed);
  } else if (name == "firstfit") {
    p = MakeFirstFitPolicy();
  } else if (name == "bestfit") {
    p = MakeBestFitPolicy(seed);
  } else if (name == "dotprod") {
    p = MakeDotProdPolicy(seed);
  } else if (name == "packing") {
    p = MakeGpuPackingPolicy(seed);
  } else if (name == "clustering") {
    p = MakeGpuClusteringPolicy(seed);
  } else if (name == "fgd") {
    p = MakeFgdPolicy(seed, workload);
  } else if (name == "gpufed") {
    p = MakeGpufedPolicy(seed, workload);
  } else {
    return InvalidArgument("unknown packing policy '" + std::string(name) +
                           "' (known: random, firstfit, bestfit, dotprod, packing, clustering, fgd, gpufed)");
  }
  return p;
}

}  // namespace gpufed::packing
