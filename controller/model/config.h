#pragma once
// An immutable, validated snapshot of a policy repository at one revision.
#include <map>
#include <string>
#include <vector>

#include "controller/model/audit_sink.h"
#include "controller/model/audit_witness.h"
#include "controller/model/cluster.h"
#include "controller/model/exchange_rates.h"
#include "controller/model/policy.h"
#include "controller/model/policy_test.h"
#include "controller/model/tenant.h"
#include "controller/model/workload.h"

namespace gpufed::model {

struct Config {
  std::string root;       // the repository folder (or the file) it was loaded from
  std::string revision;   // sha256 over sorted paths and contents; in a Git checkout <commit>+sha256:<16 hex>
  std::vector<Cluster> clusters;
  std::vector<Workload> workloads;
  std::vector<Tenant> tenants;
  std::vector<Policy> policies;
  std::vector<PolicyTest> policy_tests;
  std::vector<AuditSink> audit_sinks;
  std::vector<AuditWitness> audit_witnesses;
  std::vector<ExchangeRates> exchange_rates;  // at most one (the loader refuses more)
  std::map<std::string, std::string> lua_sources;  // repo-relative path -> text

  const Cluster* FindCluster(const std::string& name) const;
  const Tenant* FindTenant(const std::string& name) const;
  // The declared exchange rates: the one way money crosses currencies.
  CurrencyConverter Converter() const { return CurrencyConverter(exchange_rates); }
};

}  // namespace gpufed::model
