#pragma once
// What a standby replica (standby_server.h) reads to answer the workload API's reads
// itself instead of sending them to the leader: workloads, their decisions and
// explanations, and the dashboard's history samples, scoped to
// the caller's tenant exactly as the leader's Controller scopes them
// (reconcile/scoped_reads.h). The runtime implements it over a read-only session of the
// shared database (runtime/standby_reads.h); this module only serves what it returns.
//
// `caller` is the token's tenant ("" for an admin). Errors: NotFound for what the caller
// may not see or what does not exist (the same answer for both), InvalidArgument for an
// admin's bare name that several tenants have, Unavailable (with the reason) when the
// database cannot be read now. Implementations are called from several connection
// threads at once.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/duration.h"
#include "controller/common/status.h"
#include "controller/reconcile/scoped_reads.h"
#include "controller/store/records.h"

namespace gpufed::server {

class WorkloadReads {
 public:
  virtual ~WorkloadReads() = default;
  // `owner` empty: the caller's own workloads (an admin's: everyone's).
  virtual Result<std::vector<store::WorkloadRecord>> List(const std::string& caller, const std::string& owner) = 0;
  virtual Result<store::WorkloadRecord> Get(const reconcile::WorkloadRef& ref, const std::string& caller) = 0;
  // Newest first, at most reconcile::kDecisionsPerAnswer; an empty name: the caller's.
  virtual Result<std::vector<store::DecisionRow>> Decisions(const reconcile::WorkloadRef& ref,
                                                            const std::string& caller) = 0;
  // /v1/explain's answer (reconcile::ScopedExplanation on the database's rows).
  virtual Result<nlohmann::json> Explain(const reconcile::WorkloadRef& ref, const std::string& caller) = 0;
  // /v1/history's answer (reconcile::History::ToJson) over the samples the store keeps for
  // the window before `now`, the controller time of the leader's newest published view.
  virtual Result<nlohmann::json> History(const std::string& caller, std::optional<Duration> since, Duration now) = 0;
};

}  // namespace gpufed::server
