#pragma once
// A workload's name within the federation. Workload names are namespaced by tenant (two
// tenants may both run "train"), and tenant names never hold '/', so "tenant/name" is
// unambiguous: the key of every in-memory map over workloads that spans tenants.
#include <string>

namespace gpufed {

inline std::string QualifiedName(const std::string& tenant, const std::string& name) { return tenant + "/" + name; }

}  // namespace gpufed
