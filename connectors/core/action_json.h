#pragma once
// Shared helper: Actions as JSON, for connectors that persist what they accepted
// (sim and local ledgers). Round-trips every field.
#include <nlohmann/json.hpp>

#include "connectors/core/connector.h"

namespace gpufed::connectors {

nlohmann::json ActionToJson(const Action& action);
// InvalidArgument for a malformed document.
Result<Action> ActionFromJson(const nlohmann::json& j);

}  // namespace gpufed::connectors
