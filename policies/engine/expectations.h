#pragma once
// What a PolicyTest case expects of its decision, in words and as a check.
#include <string>
#include <vector>

#include "controller/model/config.h"
#include "controller/placement/plan.h"

namespace gpufed::policy {

// "placed on cluster=eu-cloud,pool=h100,nodes=1", "queued by burst", ...
std::string DescribeExpectation(const model::PolicyTestCase& c);
// The decision in the same terms: "placed on cluster=...,pool=...,node=...".
std::string DescribeDecision(const placement::Decision& d, const model::Config& config);

// What queued the workload: quota, budget, burst or capacity ("" when not queued).
std::string QueuedBy(const placement::Decision& d);

// Whether the decision meets every expectation of the case (`config`: the case's).
bool Meets(const model::PolicyTestCase& c, const placement::Decision& d, const model::Config& config);

// Per cluster: rule and reason, or score; and the clusters grouped on large federations.
std::vector<std::string> ExplainDecision(const placement::Decision& d);

}  // namespace gpufed::policy
