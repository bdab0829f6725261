#pragma once
// The world one PolicyTest case plans in: its clusters and tenants, the workload under
// test, and the state its `given` describes (how long the workload waited, the queue
// ahead of it, tenant spend, unhealthy clusters, running work bound in order by the
// placer's capacity search).
#include <memory>
#include <string>
#include <vector>

#include "controller/common/status.h"
#include "controller/model/config.h"
#include "controller/placement/plan.h"

namespace gpufed::policy {

struct CaseState {
  model::Config config;                         // the case's clusters and tenants, the repo's policies
  model::Workload workload;                     // the workload under test
  std::vector<model::Workload> running;         // the given running work (snapshot.running points here)
  placement::Snapshot snapshot;                 // points into this object: never move it

  CaseState() = default;
  CaseState(const CaseState&) = delete;
  CaseState& operator=(const CaseState&) = delete;
};

// Builds case `c` of `test` in `repo`. InvalidArgument names what cannot be set up: a
// running entry that cannot be bound where it says (by name and position; an unhealthy
// cluster holds nothing), an unhealthy cluster the case leaves out, a `waited` longer
// than `now`, or one given together with workload.submittedAt.
Result<std::unique_ptr<CaseState>> BuildCaseState(const model::Config& repo, const model::PolicyTest& test,
                                                  const model::PolicyTestCase& c, placement::PolicyHooks* hooks);

}  // namespace gpufed::policy
