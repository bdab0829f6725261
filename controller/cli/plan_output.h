#pragma once
// Renders a Plan as a human table or as JSON (the stable machine format).
#include <string>

#include <nlohmann/json.hpp>

#include "controller/model/config.h"
#include "controller/placement/plan.h"

namespace gpufed::cli {

std::string RenderPlanTable(const placement::Plan& plan, const model::Config& config);
// {"revision", "decisions": [the decision object of each, placement/decision_object.h]}.
nlohmann::json PlanToJson(const placement::Plan& plan, const model::Config& config);
// "0-7", "3", "2 (1g.10gb)", "0 (250m)", or "-".
std::string DescribeGpus(const placement::Binding& binding);

}  // namespace gpufed::cli
