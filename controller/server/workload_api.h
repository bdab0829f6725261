#pragma once
// The workload API's wire format, one definition for every replica: its paths and the
// JSON of a workload and of a page of decisions. The leader's API (server.cc) and a
// standby's reads (standby_server.cc) both answer with these, so a client cannot tell
// whose answer it read by its shape.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/store/records.h"

namespace gpufed::server {

// Workloads are namespaced by tenant: /v1/tenants/{tenant}/workloads[/{name}[/explain|/decisions]].
// The short paths (/v1/workloads[/{name}], /v1/explain/{name}, /v1/decisions?workload=)
// stay as aliases for the token's own tenant (for an admin: the one tenant with that name).
// A tenant's or a workload's name in a route (httplib's regex routes).
inline constexpr char kNamePattern[] = "([A-Za-z0-9._-]+)";
// /v1/tenants/{tenant}/workloads as a route.
std::string TenantWorkloadsRoute();

// A workload as the API shows it (every field from the store's row).
nlohmann::json WorkloadJson(const store::WorkloadRecord& r);
// {"items": [...]}: each decision's object with its `seq` and `time`, in the rows' order;
// a row whose object does not parse is left out.
nlohmann::json DecisionsJson(const std::vector<store::DecisionRow>& rows);

}  // namespace gpufed::server
