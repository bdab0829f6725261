#pragma once
// The kubernetes provider's `spec.connector` block, typed: decoded and checked here, for
// the loader (file:line errors through the registry) and for the factory alike. The
// README's settings table describes each field; KubernetesConfigSchema() is the same for
// editors.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/status.h"
#include "controller/model/connector_spec.h"

namespace gpufed::connectors::kubernetes {

// Paths as written (model::DeclaredPath resolves them against the declaring file).
struct KubernetesConfig {
  std::string kubeconfig;  // empty with no endpoint: the in-cluster service account
  std::string context;     // empty: the kubeconfig's current-context
  std::string ns;          // `namespace`; empty: the context's, else "default"
  std::string endpoint;    // overrides the server URL
  std::string ca_file;     // overrides the kubeconfig's certificate-authority
  std::string token_env;   // override the user's bearer token
  std::string token_file;
};

// Every problem of a `type: kubernetes` block (unknown fields, wrong types), with field
// path and position; none when it is valid.
std::vector<model::ConnectorProblem> CheckKubernetesConfig(const model::ConnectorSpec& spec);
// The block as a KubernetesConfig; InvalidArgument listing the problems.
Result<KubernetesConfig> DecodeKubernetesConfig(const model::ConnectorSpec& spec);
// The JSON Schema properties of the fields above (registry.h, ConnectorProvider).
nlohmann::json KubernetesConfigSchema();

}  // namespace gpufed::connectors::kubernetes
