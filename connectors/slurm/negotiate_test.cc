// Choosing the API version from what real servers offer (tests/fixtures/slurm/*/openapi_v3.json).
#include "connectors/slurm/negotiate.h"

#include <fstream>

#include <gtest/gtest.h>

#include "connectors/slurm/fixtures_for_test.h"

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;

const std::vector<std::string> k2205 = {"v0.0.38"};
const std::vector<std::string> k2411 = {"v0.0.40", "v0.0.41", "v0.0.42"};

TEST(SlurmNegotiate, ReadsOfferedVersionsFromRecordedOpenApiDocuments) {
  EXPECT_EQ(VersionsInOpenApi(testing::Fixture("v0.0.38", "openapi_v3.json")), k2205);
  for (const char* v : {"v0.0.40", "v0.0.41", "v0.0.42"}) {
    EXPECT_EQ(VersionsInOpenApi(testing::Fixture(v, "openapi_v3.json")), k2411) << v;
  }
  // slurmdb paths, odd names and shapes are not versions of the slurm API.
  json doc = {{"paths",
               {{"/slurmdb/v0.0.42/jobs", {}},
                {"/slurm/v0.0.9x/ping", {}},
                {"/slurm/", {}},
                {"/slurm/v0.0.100/ping", {}},
                {"/slurm/v0.0.43/ping/", {}},
                {"/openapi/v3", {}}}}};
  EXPECT_EQ(VersionsInOpenApi(doc), (std::vector<std::string>{"v0.0.43", "v0.0.100"}));
  for (const json& odd : {json(), json::array(), json{{"paths", 3}}, json{{"paths", json::array()}}}) {
    EXPECT_TRUE(VersionsInOpenApi(odd).empty()) << odd.dump();
  }
}

TEST(SlurmNegotiate, AutoTakesTheNewestBothSpeak) {
  for (const char* setting : {"auto", ""}) {
    Result<const ApiMapping*> old = ChooseApi(setting, k2205, "http://x");
    ASSERT_TRUE(old.ok()) << old.status().ToString();
    EXPECT_EQ((*old)->version(), "v0.0.38");
    Result<const ApiMapping*> now = ChooseApi(setting, k2411, "http://x");
    ASSERT_TRUE(now.ok());
    EXPECT_EQ((*now)->version(), "v0.0.42");
  }
  // 25.05 adds v0.0.43; 25.11 drops v0.0.40 and adds v0.0.44: still v0.0.42.
  EXPECT_EQ((*ChooseApi("auto", {"v0.0.41", "v0.0.42", "v0.0.43", "v0.0.44"}, "http://x"))->version(), "v0.0.42");
  // 26.11: nothing in common, and the message names both lists.
  Result<const ApiMapping*> none = ChooseApi("auto", {"v0.0.43", "v0.0.44", "v0.0.45"}, "http://slurm:6820");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(none.status().message().find("offers v0.0.43, v0.0.44, v0.0.45"), std::string::npos)
      << none.status().message();
  EXPECT_NE(none.status().message().find("v0.0.38, v0.0.40, v0.0.41, v0.0.42"), std::string::npos);
  EXPECT_NE(none.status().message().find("http://slurm:6820"), std::string::npos);
}

TEST(SlurmNegotiate, PinnedVersionMustBeOffered) {
  Result<const ApiMapping*> pinned = ChooseApi("v0.0.41", k2411, "http://x");
  ASSERT_TRUE(pinned.ok());
  EXPECT_EQ((*pinned)->version(), "v0.0.41");
  Result<const ApiMapping*> gone = ChooseApi("v0.0.38", k2411, "http://127.0.0.1:6830");
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(gone.status().message().find("offers v0.0.40, v0.0.41, v0.0.42"), std::string::npos)
      << gone.status().message();
  Result<const ApiMapping*> unknown = ChooseApi("v0.0.39", k2411, "http://x");
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("auto"), std::string::npos);
}

}  // namespace
}  // namespace gpufed::connectors::slurm

namespace gpufed::connectors::slurm {
namespace {

// connector.apiVersion is validated before any connector exists: by the provider's
// check (slurm_config.cc, which the loader runs) and by the published JSON Schema editors
// use. The schema is assembled from SlurmConfigSchema() (slurm_config_test checks it lists
// ApiVersionSettings(); tests/docs checks the published file equals the assembly); the
// published file must list exactly what the adapters support.
TEST(SlurmNegotiate, ThePublishedSchemaListsTheAdaptersVersions) {
  std::ifstream in(std::string(GPUFED_SOURCE_DIR) + "/schemas/cluster.schema.json");
  json schema = json::parse(in, nullptr, false);
  ASSERT_FALSE(schema.is_discarded());
  json listed = schema["$defs"]["connector-slurm"]["properties"]["apiVersion"]["enum"];
  EXPECT_EQ(listed, json(ApiVersionSettings()));
}

}  // namespace
}  // namespace gpufed::connectors::slurm
