#pragma once
// Tenant.spec.maxPriority binds every submission for the tenant, whatever its path: the
// repository's workloads (`gpufed validate`, each activation), a scenario's submissions
// and the API's, admin tokens included (the repository is the authority; an operator who
// needs more changes it). A tenant token whose tenant declares no cap is also held to
// the normal class (reconcile::Controller::Submit), so a token cannot preempt other
// tenants' work unless the repository allows it. Every path reports the same line.
#include <optional>
#include <string>

#include "controller/config/diagnostics.h"
#include "controller/model/tenant.h"
#include "controller/model/workload.h"

namespace gpufed::config {

struct PriorityCap {
  int value = 0;
  std::string named;  // what the message adds after the number, e.g. " (normal)"
};

// The cap `tenant` declares (maxPriority, resolved from its class); none when it declares none.
std::optional<PriorityCap> DeclaredPriorityCap(const model::Tenant& tenant);

// The error for a workload whose priority is above `cap`, at its document:
// "FILE:LINE:COL: error: spec.priority: priority N is above tenant T's maxPriority M (...)".
std::optional<Diagnostic> CheckPriorityCap(const model::Workload& workload, const PriorityCap& cap);

}  // namespace gpufed::config
