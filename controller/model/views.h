#pragma once
// JSON views of resources: what YAML rules (`when`/`require` paths) and Lua hooks see.
// Field names follow the YAML (camelCase). Quantities become numbers in base units
// (bytes for memory, cores for CPU, a fraction for gpuShare), durations seconds, and
// money a decimal number: views are for reading and comparing, never for accounting.
// view_fields.h lists every field with its type and meaning (the reference's source).
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "controller/model/cluster.h"
#include "controller/model/exchange_rates.h"
#include "controller/model/workload.h"

namespace gpufed::model {

// {name, labels, tenant, priority, priorityClass, type, resources{...}, data{...}, ...}
nlohmann::json WorkloadView(const Workload& workload);
// Top-level members of a workload view, by name.
using ViewMembers = std::set<std::string, std::less<>>;
// The view with only the top-level members in `only` (each built as WorkloadView builds
// it): whatever is read below those members reads the same as in the whole view. The
// placer asks it for the members its class lookups read.
nlohmann::json WorkloadView(const Workload& workload, const ViewMembers& only);
// A hash of every field WorkloadView reads (common/hash64.h: in-process only): equal
// workloads' views are equal, and different views get different keys (at odds of 2^-64),
// so a cache may keep a view under it. A field added to the view must be added here
// (view_fields_test.cc changes each field and expects the key to change).
uint64_t WorkloadViewKey(const Workload& workload);
// {name, labels, provider, onprem, region, zone, connector, attributes{...}, nodePools[...],
//  gpuModels[...], pricing{...}, datasets[...], elastic}
// With `rates`, pricing.rates holds, per currency the repository's exchange rates reach
// from the cluster's, its units per unit of the cluster's currency (the cluster's own: 1),
// so a Lua hook compares a price with a cap in another currency (stdlib/cost-caps).
nlohmann::json ClusterView(const Cluster& cluster, const CurrencyConverter* rates = nullptr);
// {name, count, cpu, memory, spot, gpu{model, count, memory, nvlink, sharing, migProfiles},
//  isolation: "exclusive" | "hard" (MIG) | "soft" (memory sharing)}
nlohmann::json NodePoolView(const NodePool& pool);

// Resolves a dotted path in a view; nullptr when any segment is missing.
const nlohmann::json* ResolvePath(const nlohmann::json& view, const std::vector<std::string>& segments);

}  // namespace gpufed::model
