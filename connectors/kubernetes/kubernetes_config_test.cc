#include "connectors/kubernetes/kubernetes_config.h"

#include <gtest/gtest.h>

namespace gpufed::connectors::kubernetes {
namespace {

model::ConnectorSpec FullBlock() {
  model::ConnectorSpec spec;
  spec.type = "kubernetes";
  int line = 10;
  for (auto [key, value] : {std::pair{"kubeconfig", "kube/gke.yaml"},
                            {"context", "gpufed@gke"},
                            {"namespace", "gpufed-jobs"},
                            {"endpoint", "https://10.0.0.1:6443"},
                            {"caFile", "pki/ca.pem"},
                            {"tokenEnv", "KUBE_TOKEN"},
                            {"tokenFile", "secrets/token"}}) {
    spec.fields[key] = {value, std::string("spec.connector.") + key, {"clusters.yaml", ++line, 5}};
  }
  return spec;
}

TEST(KubernetesConfig, DecodesEveryField) {
  Result<KubernetesConfig> c = DecodeKubernetesConfig(FullBlock());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->kubeconfig, "kube/gke.yaml");
  EXPECT_EQ(c->context, "gpufed@gke");
  EXPECT_EQ(c->ns, "gpufed-jobs");
  EXPECT_EQ(c->endpoint, "https://10.0.0.1:6443");
  EXPECT_EQ(c->ca_file, "pki/ca.pem");
  EXPECT_EQ(c->token_env, "KUBE_TOKEN");
  EXPECT_EQ(c->token_file, "secrets/token");
}

TEST(KubernetesConfig, ReportsAWrongTypeAndAFieldItDoesNotReadWithFileLineAndField) {
  model::ConnectorSpec spec = FullBlock();
  spec.fields["namespace"].value = 7;
  spec.fields["partition"] = {"gpu", "spec.connector.partition", {"clusters.yaml", 30, 5}};
  std::vector<model::ConnectorProblem> problems = CheckKubernetesConfig(spec);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].ToString(),
            "clusters.yaml:30:5: spec.connector.partition: unknown field 'partition'; a kubernetes connector reads "
            "type, timeout, qps, burst, kubeconfig, context, namespace, endpoint, caFile, tokenEnv, tokenFile");
  EXPECT_EQ(problems[1].ToString(),
            "clusters.yaml:13:5: spec.connector.namespace: expected a string, got an integer (quote it: \"7\")");
  EXPECT_EQ(DecodeKubernetesConfig(spec).status().code(), StatusCode::kInvalidArgument);
}

TEST(KubernetesConfig, TheSchemaDescribesExactlyTheFieldsTheDecoderReads) {
  nlohmann::json schema = KubernetesConfigSchema();
  model::ConnectorSpec spec;
  spec.type = "kubernetes";
  for (const auto& [key, property] : schema.items()) {
    EXPECT_TRUE(property.contains("description")) << key;
    spec.Set(key, "x");
  }
  EXPECT_TRUE(CheckKubernetesConfig(spec).empty());
  EXPECT_EQ(spec.fields.size(), FullBlock().fields.size());
}

}  // namespace
}  // namespace gpufed::connectors::kubernetes
