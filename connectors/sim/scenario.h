#pragma once
// A simulation scenario: the extra Workload files a run submits over virtual time and
// the failures the sim connector injects. Its own small file format, read only by the
// simulator and `gpufed run`, so the resource model stays free of test-only fields:
//
//   submissions: [burst.yaml]          # Workload files (paths relative to this file),
//                                      # each submitted at its spec.submittedAt
//   failures:
//     - {cluster: eu-cloud, type: outage, at: 3h, until: 4h}
//     - {cluster: us-cloud, type: node-loss, node: p4d-1, at: 5h}
//     - {cluster: eu-cloud, type: spot-reclaim, node: h100-1, at: 2h}
//
// Keep scenario files out of the policy repository's resources (a `.gpufedignore`
// entry), since they are not resources.
#include <string>
#include <vector>

#include "controller/common/duration.h"
#include "controller/common/status.h"

namespace gpufed::connectors::sim {

enum class FailureType { kOutage, kNodeLoss, kSpotReclaim };

struct Failure {
  std::string cluster;
  FailureType type = FailureType::kOutage;
  std::string node;   // node-loss and spot-reclaim
  Duration at;
  Duration until;     // outage only
};

struct Scenario {
  std::vector<std::string> submissions;  // absolute or relative to the working directory
  std::vector<Failure> failures;

  std::vector<Failure> FailuresOf(const std::string& cluster) const;
};

// Errors name the file, line and column: "scenario.yaml:4:7: failures[0].type: ...".
Result<Scenario> LoadScenario(const std::string& path);
Result<Scenario> ParseScenario(const std::string& text, const std::string& file_name, const std::string& base_dir);

}  // namespace gpufed::connectors::sim
