#pragma once
// The slurm provider's `spec.connector` block, typed: decoded and checked here, for the
// loader (file:line errors through the registry) and for the factory alike. The README
// ("Cluster settings") describes each field; SlurmConfigSchema() is the same for editors.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/status.h"
#include "controller/model/connector_spec.h"

namespace gpufed::connectors::slurm {

struct SlurmConfig {
  std::string endpoint;    // slurmrestd URL
  std::string token_env;   // variable holding the JWT, or
  std::string token_file;  // file holding it, as written (model::DeclaredPath resolves it)
  std::string ca_file;     // PEM trust anchors of an https endpoint, as written; empty: the system's
  std::string user;        // X-SLURM-USER-NAME; empty: the token's "sun" claim
  std::string partition;   // empty: every partition is observed, Slurm's default takes jobs
  std::string api_version = "auto";  // "auto" or one of ApiVersionSettings()
};

// Every problem of a `type: slurm` block (unknown fields, wrong types, an apiVersion
// without an adapter), with field path and position; none when it is valid.
std::vector<model::ConnectorProblem> CheckSlurmConfig(const model::ConnectorSpec& spec);
// The block as a SlurmConfig; InvalidArgument listing the problems.
Result<SlurmConfig> DecodeSlurmConfig(const model::ConnectorSpec& spec);
// The JSON Schema properties of the fields above (registry.h, ConnectorProvider).
nlohmann::json SlurmConfigSchema();

}  // namespace gpufed::connectors::slurm
