#include "connectors/slurm/slurm_config.h"

#include <gtest/gtest.h>

#include "connectors/slurm/api.h"

namespace gpufed::connectors::slurm {
namespace {

// Every field the README documents, each at its own line of clusters.yaml.
model::ConnectorSpec FullBlock() {
  model::ConnectorSpec spec;
  spec.type = "slurm";
  int line = 20;
  for (auto [key, value] : {std::pair{"endpoint", "https://slurm.example:6820"},
                            {"tokenFile", "secrets/jwt"},
                            {"caFile", "pki/ca.pem"},
                            {"user", "gpufed"},
                            {"partition", "gpu"},
                            {"apiVersion", "v0.0.40"}}) {
    spec.fields[key] = {value, std::string("spec.connector.") + key, {"clusters.yaml", ++line, 5}};
  }
  return spec;
}

TEST(SlurmConfig, DecodesEveryField) {
  Result<SlurmConfig> c = DecodeSlurmConfig(FullBlock());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->endpoint, "https://slurm.example:6820");
  EXPECT_EQ(c->token_file, "secrets/jwt");
  EXPECT_EQ(c->ca_file, "pki/ca.pem");
  EXPECT_EQ(c->user, "gpufed");
  EXPECT_EQ(c->partition, "gpu");
  EXPECT_EQ(c->api_version, "v0.0.40");
  EXPECT_TRUE(c->token_env.empty());
  EXPECT_TRUE(CheckSlurmConfig(FullBlock()).empty());
}

TEST(SlurmConfig, DefaultsToNegotiatingTheApiVersion) {
  model::ConnectorSpec spec;
  spec.type = "slurm";
  spec.Set("endpoint", "https://s:6820");
  Result<SlurmConfig> c = DecodeSlurmConfig(spec);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->api_version, "auto");
}

TEST(SlurmConfig, EachBadFieldIsReportedWithFileLineAndField) {
  for (const char* key : {"endpoint", "tokenEnv", "tokenFile", "caFile", "user", "partition", "apiVersion"}) {
    model::ConnectorSpec spec = FullBlock();
    spec.fields[key] = {true, std::string("spec.connector.") + key, {"clusters.yaml", 40, 7}};
    std::vector<model::ConnectorProblem> problems = CheckSlurmConfig(spec);
    ASSERT_EQ(problems.size(), 1u) << key;
    EXPECT_EQ(problems[0].ToString(), std::string("clusters.yaml:40:7: spec.connector.") + key +
                                          ": expected a string, got a boolean (quote it: \"true\")");
  }
}

TEST(SlurmConfig, RefusesAnApiVersionWithoutAnAdapterAndAFieldItDoesNotRead) {
  model::ConnectorSpec spec = FullBlock();
  spec.fields["apiVersion"].value = "v0.0.39";
  spec.fields["namespace"] = {"jobs", "spec.connector.namespace", {"clusters.yaml", 30, 5}};
  std::vector<model::ConnectorProblem> problems = CheckSlurmConfig(spec);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].ToString(),
            "clusters.yaml:30:5: spec.connector.namespace: unknown field 'namespace'; a slurm connector reads type, "
            "timeout, qps, burst, endpoint, tokenEnv, tokenFile, caFile, user, partition, apiVersion");
  EXPECT_EQ(problems[1].ToString(),
            "clusters.yaml:26:5: spec.connector.apiVersion: invalid value 'v0.0.39' (allowed: auto, v0.0.38, v0.0.40, "
            "v0.0.41, v0.0.42); did you mean 'v0.0.38'?");
  Result<SlurmConfig> decoded = DecodeSlurmConfig(spec);
  EXPECT_EQ(decoded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(decoded.status().message().find("clusters.yaml:26:5: spec.connector.apiVersion"), std::string::npos);
}

TEST(SlurmConfig, TheSchemaDescribesExactlyTheFieldsTheDecoderReads) {
  nlohmann::json schema = SlurmConfigSchema();
  model::ConnectorSpec spec;
  spec.type = "slurm";
  for (const auto& [key, property] : schema.items()) {
    EXPECT_TRUE(property.contains("description")) << key;
    spec.Set(key, key == "apiVersion" ? "auto" : "x");
  }
  EXPECT_TRUE(CheckSlurmConfig(spec).empty());  // nothing the schema lists is refused
  EXPECT_EQ(spec.fields.size(), FullBlock().fields.size() + 1);  // and it lists tokenEnv too
  std::vector<std::string> versions = ApiVersionSettings();
  EXPECT_EQ(schema["apiVersion"]["enum"], nlohmann::json(versions));
}

}  // namespace
}  // namespace gpufed::connectors::slurm
