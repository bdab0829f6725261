#pragma once
// Published FGD results (summary_gpu_alloc_by_policy.csv from the authors'
// expected_results): mean allocation % per workload, policy and arrived level.
#include <map>
#include <string>

#include "controller/common/status.h"

namespace gpufed::replay {

// workload (pod file stem) -> our policy name -> arrived level -> alloc %.
using ReferenceTable = std::map<std::string, std::map<std::string, std::map<int, double>>>;

// Our name for a reference policy label ("05-BestFit" -> "bestfit"); empty if unknown.
std::string OurPolicyName(const std::string& sc_policy);

// Reads the rows whose stat is "mean". InvalidArgument with file and line for bad
// cells; NotFound if the file cannot be read.
Result<ReferenceTable> ReadReference(const std::string& path);

}  // namespace gpufed::replay
