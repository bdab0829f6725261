#include "connectors/kubernetes/kubernetes_config.h"

#include "connectors/core/connector_fields.h"

namespace gpufed::connectors::kubernetes {
namespace {

KubernetesConfig Decode(const model::ConnectorSpec& spec, std::vector<model::ConnectorProblem>& problems) {
  ConnectorFieldReader read(spec,
                            {"kubeconfig", "context", "namespace", "endpoint", "caFile", "tokenEnv", "tokenFile"});
  KubernetesConfig c;
  auto text = [&](const char* key, std::string& out) {
    if (std::optional<std::string> v = read.String(key)) out = *v;
  };
  text("kubeconfig", c.kubeconfig);
  text("context", c.context);
  text("namespace", c.ns);
  text("endpoint", c.endpoint);
  text("caFile", c.ca_file);
  text("tokenEnv", c.token_env);
  text("tokenFile", c.token_file);
  problems = read.problems();
  return c;
}

}  // namespace

std::vector<model::ConnectorProblem> CheckKubernetesConfig(const model::ConnectorSpec& spec) {
  std::vector<model::ConnectorProblem> problems;
  (void)Decode(spec, problems);
  return problems;
}

Result<KubernetesConfig> DecodeKubernetesConfig(const model::ConnectorSpec& spec) {
  std::vector<model::ConnectorProblem> problems;
  KubernetesConfig config = Decode(spec, problems);
  GPUFED_RETURN_IF_ERROR(ProblemsToStatus(problems));
  return config;
}

nlohmann::json KubernetesConfigSchema() {
  auto text = [](const char* description) { return nlohmann::json{{"description", description}, {"type", "string"}}; };
  return {
      {"kubeconfig",
       text("Path of a kubeconfig file, absolute or relative to the folder of the file that declares the cluster (~/ "
            "expands). Empty, with no endpoint: the in-cluster service account.")},
      {"context", text("kubeconfig context to use. Default: its current-context.")},
      {"namespace", text("Kubernetes namespace gpufed creates Jobs in. Default: the context's, else default.")},
      {"endpoint", text("https:// URL of the API server; overrides the kubeconfig's server.")},
      {"caFile",
       text("PEM file of the certificate authorities that sign the API server's certificate; overrides the "
            "kubeconfig's certificate-authority. Absolute or relative to the folder of the file that declares the "
            "cluster. Verification is never turned off.")},
      {"tokenEnv",
       text("Name of an environment variable holding the bearer token; overrides the kubeconfig user's token.")},
      {"tokenFile",
       text("Path of a file holding the bearer token, re-read on every call (rotated tokens); overrides the "
            "kubeconfig user's token.")},
  };
}

}  // namespace gpufed::connectors::kubernetes
