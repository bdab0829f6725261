#pragma once
// Which slurmrestd API version to speak. `connector.apiVersion: auto` (the default) takes
// the newest version both sides know; an explicit version pins it. The server's offer
// comes from its OpenAPI document (GET /openapi/v3, whose paths are named
// /slurm/v0.0.NN/...), or, from a server without one, from pinging each version gpufed
// knows. Pure functions; the client (slurm_client.h) does the requests.
//
// Newer servers keep working while they still serve a version gpufed knows: 25.05 adds
// v0.0.43 and keeps v0.0.41-v0.0.42, so `auto` stays on v0.0.42; a server that offers none
// of gpufed's versions is a clear error that names both lists.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "connectors/slurm/api.h"

namespace gpufed::connectors::slurm {

// The versions of the `slurm` API in an OpenAPI document's paths
// ("/slurm/v0.0.42/ping" -> "v0.0.42"), oldest first, each once; {} when it has none.
std::vector<std::string> VersionsInOpenApi(const nlohmann::json& document);

// The adapter for `setting` ("auto", "" or a version) on a server offering `offered`.
// InvalidArgument for a setting gpufed does not support; FailedPrecondition when the
// server does not offer the pinned version, or (auto) none gpufed supports. `endpoint`
// names the server in messages.
Result<const ApiMapping*> ChooseApi(std::string_view setting, const std::vector<std::string>& offered,
                                    const std::string& endpoint);

// "v0.0.40, v0.0.41, v0.0.42"
std::string JoinVersions(const std::vector<std::string>& versions);

}  // namespace gpufed::connectors::slurm
