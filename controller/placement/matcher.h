#pragma once
// Evaluates Policy rule conditions against JSON views (model/views.h).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/model/policy.h"

namespace gpufed::placement {

// True when the condition holds of `view`. A missing field matches only
// `exists: false` and `notIn`. Numeric comparisons accept quantity strings as operands
// ("40Gi" compares with a view's bytes).
bool ConditionHolds(const model::Condition& condition, const nlohmann::json& view);

// True when every condition of the given level (node-level ones apply to node pools)
// holds of `view`.
bool AllConditionsHold(const std::vector<model::Condition>& conditions, const nlohmann::json& view, bool node_level);

// Human text for why a require condition failed: "requires cluster.zone in [eu], is 'us'".
std::string DescribeFailure(const model::Condition& condition, const nlohmann::json& view);

}  // namespace gpufed::placement
