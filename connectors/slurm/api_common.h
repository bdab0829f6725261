#pragma once
// What the adapters (api_v00*.cc) share, and the client's reading of error replies; the
// rest of the connector sees only api.h.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "connectors/slurm/api.h"

namespace gpufed::connectors::slurm {

// The `errors` and `warnings` arrays of any reply. Diagnostics are read tolerantly:
// entries that are not objects are skipped, a missing array is empty.
std::vector<SlurmError> ReadErrors(const nlohmann::json& reply);
std::vector<SlurmWarning> ReadWarnings(const nlohmann::json& reply);

// A job's per-node GRES request: "gres:gpu:a100:2" (v0.0.38) or "gres/gpu:a100:2"
// (v0.0.40+), possibly several, comma-separated.
std::vector<GresItem> ParseTresPerNode(std::string text);
// job.gres from what the job holds (gres_detail, one entry per node while it runs), else
// its per-node request times its node count (pending and finished jobs).
void FillJobGres(SlurmJob& job, const std::vector<std::string>& gres_detail, int node_count);

// The adapters, one immutable instance each.
const ApiMapping& ApiV0038();
const ApiMapping& ApiV0040();
const ApiMapping& ApiV0041();
const ApiMapping& ApiV0042();

}  // namespace gpufed::connectors::slurm
