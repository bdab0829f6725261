#include "connectors/slurm/slurm_config.h"

#include "connectors/core/connector_fields.h"
#include "connectors/slurm/api.h"

namespace gpufed::connectors::slurm {
namespace {

SlurmConfig Decode(const model::ConnectorSpec& spec, std::vector<model::ConnectorProblem>& problems) {
  ConnectorFieldReader read(spec, {"endpoint", "tokenEnv", "tokenFile", "caFile", "user", "partition", "apiVersion"});
  SlurmConfig c;
  auto text = [&](const char* key, std::string& out) {
    if (std::optional<std::string> v = read.String(key)) out = *v;
  };
  text("endpoint", c.endpoint);
  text("tokenEnv", c.token_env);
  text("tokenFile", c.token_file);
  text("caFile", c.ca_file);
  text("user", c.user);
  text("partition", c.partition);
  // The versions there is an adapter for (api.h), kept equal to the published schema's
  // by SlurmConfigSchema and tests/docs.
  const std::vector<std::string> versions = ApiVersionSettings();
  const std::vector<std::string_view> allowed(versions.begin(), versions.end());
  if (std::optional<std::string> v = read.Enum("apiVersion", allowed)) c.api_version = *v;
  problems = read.problems();
  return c;
}

}  // namespace

std::vector<model::ConnectorProblem> CheckSlurmConfig(const model::ConnectorSpec& spec) {
  std::vector<model::ConnectorProblem> problems;
  (void)Decode(spec, problems);
  return problems;
}

Result<SlurmConfig> DecodeSlurmConfig(const model::ConnectorSpec& spec) {
  std::vector<model::ConnectorProblem> problems;
  SlurmConfig config = Decode(spec, problems);
  GPUFED_RETURN_IF_ERROR(ProblemsToStatus(problems));
  return config;
}

nlohmann::json SlurmConfigSchema() {
  auto text = [](const char* description) { return nlohmann::json{{"description", description}, {"type", "string"}}; };
  nlohmann::json api_version = text(
      "Version of the slurmrestd REST API: auto (the default: the newest version both slurmrestd and gpufed speak, "
      "negotiated at start and after every reconnect), or one of v0.0.38 (Slurm 22.05), v0.0.40, v0.0.41, v0.0.42 "
      "(Slurm 24.11) to pin it.");
  api_version["enum"] = ApiVersionSettings();
  return {
      {"endpoint",
       text("slurmrestd URL such as https://slurm.example:6820; http:// only to a loopback host with the annotation "
            "slurm.gpufed.io/allow-plain-http: loopback, since every request carries the JWT.")},
      {"tokenEnv",
       text("Name of an environment variable holding the Slurm JWT (e.g. SLURM_JWT). The token itself never appears "
            "in the repository or in logs. Exactly one of tokenEnv and tokenFile.")},
      {"tokenFile",
       text("Path of a file holding the Slurm JWT, absolute or relative to the folder of the file that declares the "
            "cluster. Re-read on every call, so a rotated token is used at once.")},
      {"caFile",
       text("PEM file of the certificate authorities that sign the https endpoint (slurmrestd behind TLS with a "
            "private CA), absolute or relative to the folder of the file that declares the cluster. Empty: the "
            "system's trust store. Verification is never turned off.")},
      {"user", text("Slurm user gpufed acts as (X-SLURM-USER-NAME); default: the token's sun claim.")},
      {"partition", text("Slurm partition jobs go to; only its nodes are observed. Default: every partition.")},
      {"apiVersion", api_version},
  };
}

}  // namespace gpufed::connectors::slurm
