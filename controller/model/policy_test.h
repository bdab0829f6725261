#pragma once
// A PolicyTest: cases of (state, clusters, tenants, workload) -> expected outcome.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/common/duration.h"
#include "controller/common/money.h"
#include "controller/model/meta.h"
#include "controller/model/workload.h"

namespace gpufed::model {

enum class ExpectedOutcome { kPlaced, kQueued, kRejected };

struct Expectation {
  ExpectedOutcome outcome = ExpectedOutcome::kPlaced;
  std::string cluster;                          // placed on exactly this cluster
  std::map<std::string, std::string> selector;  // or on a cluster with these fields
  std::string node;                             // placed: on this node (one of the nodes of a gang)
  std::string pool;                             // placed: on nodes of this node pool
  std::string mig_profile;                      // placed: as this MIG slice
  std::optional<int> gpus_per_node;             // placed: GPUs on each node used
  std::optional<int> nodes;                     // placed: number of nodes used
  std::optional<Money> max_cost;                // placed: estimated cost at most this
  // rejected: by this rule; queued: by burst, quota, budget or capacity, or held back by a rule or policy
  std::string rule;
  std::string reason;                           // substring of the decision's reason
  std::optional<std::vector<std::string>> preempts;  // the running work it preempts, by name ([] = none)
};

// Work already running when the case's workload is planned. The test binds it in
// order, with the placer's capacity search, to the named cluster (and node).
struct GivenRunning {
  std::string name;        // "running-N" (its place in `running`, from 1) when not written
  Workload workload;
  std::string cluster;
  std::string node;        // "" = wherever it fits
  SourceLocation location;
};

struct GivenSpend {
  std::optional<Money> spent;        // this budget period, all clusters
  std::optional<Money> cloud_spent;  // this budget period, cloud clusters
};

// The state a case starts from. Fields a case leaves out come from its PolicyTest's
// `spec.given`, field by field.
struct Given {
  std::optional<Duration> waited;                           // how long the workload has been queued
  std::optional<int> queue_ahead;                           // workloads waiting for on-prem before it
  std::optional<std::vector<GivenRunning>> running;
  std::optional<std::map<std::string, GivenSpend>> usage;   // by tenant
  std::optional<std::vector<std::string>> unhealthy;        // clusters that do not answer

  // This over `defaults`: each field this one leaves unset is taken from it.
  Given Over(const Given& defaults) const;
};

struct PolicyTestCase {
  std::string name;
  std::vector<std::string> clusters;  // empty = every cluster of the repo
  std::vector<std::string> tenants;   // empty = every tenant of the repo
  Duration now;
  bool now_set = false;               // `now` was written
  Given given;
  Workload workload;
  Expectation expect;
  std::vector<std::string> reasons;   // substrings expected among the explanation
  SourceLocation location;
};

struct PolicyTest {
  ObjectMeta metadata;
  Given given;                        // defaults for every case
  std::vector<PolicyTestCase> cases;
};

}  // namespace gpufed::model
