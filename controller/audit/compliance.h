#pragma once
// The compliance verdict on one placement, from its decision record alone: did
// restricted, personal or residency-bound data run where it may? The placer never places
// such work elsewhere, so a violation means a policy revision allowed it or a bug did;
// `gpufed audit report` makes it loud.
//
// Checks, in order (the first that fails is the verdict):
//   data-residency          the target's zone is not in the workload's data.residency
//                           (the placer's built-in check);
//   restricted-only-onprem  restricted data on a cluster whose provider is not onprem
//                           (what `restricted` means in gpufed: stdlib/data-sensitivity);
//   pii-zones               PII in a zone outside `pii_zones` (stdlib/compliance-zones'
//                           piiZones, default [eu]; empty: not checked);
//   verdict                 the chosen cluster's own verdict in the record rejected it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpufed::audit {

struct ComplianceRules {
  std::vector<std::string> pii_zones = {"eu"};
};

struct ComplianceVerdict {
  bool ok = true;
  std::string rule;    // the check that failed
  std::string detail;  // why, and where the work ran: "data must stay in eu; ran on us-cloud (zone us, region us-east)"
};

// For a `decision` record with outcome `placed` (others: ok).
ComplianceVerdict CheckPlacement(const nlohmann::json& decision, const ComplianceRules& rules);

}  // namespace gpufed::audit
