#pragma once
// A PolicyTest: cases of (clusters, tenants, workload) -> expected outcome.
#include <map>
#include <string>
#include <vector>

#include "controller/common/duration.h"
#include "controller/model/meta.h"
#include "controller/model/workload.h"

namespace gpufed::model {

enum class ExpectedOutcome { kPlaced, kQueued, kRejected };

struct Expectation {
  ExpectedOutcome outcome = ExpectedOutcome::kPlaced;
  std::string cluster;                          // placed on exactly this cluster
  std::map<std::string, std::string> selector;  // or on a cluster with these fields
  std::string rule;                             // rejected by this rule
  std::string reason;                           // substring of the decision's reason
};

struct PolicyTestCase {
  std::string name;
  std::vector<std::string> clusters;  // empty = every cluster of the repo
  std::vector<std::string> tenants;   // empty = every tenant of the repo
  Duration now;
  Workload workload;
  Expectation expect;
  std::vector<std::string> reasons;   // substrings expected among the explanation
  SourceLocation location;
};

struct PolicyTest {
  ObjectMeta metadata;
  std::vector<PolicyTestCase> cases;
};

}  // namespace gpufed::model
