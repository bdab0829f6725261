#include "connectors/core/connector_fields.h"

#include <gtest/gtest.h>

namespace gpufed::connectors {
namespace {

// A block as the loader keeps it: each field with its path and position.
model::ConnectorSpec Block(std::initializer_list<std::pair<std::string, nlohmann::json>> fields) {
  model::ConnectorSpec spec;
  spec.type = "demo";
  int line = 10;
  for (const auto& [key, value] : fields) {
    spec.fields[key] = {value, "spec.connector." + key, {"clusters.yaml", ++line, 5}};
  }
  return spec;
}

constexpr std::string_view kModes[] = {"fast", "safe"};

TEST(ConnectorFieldReader, ReadsTheFieldsItKnowsAndReportsTheRestWithFileLineAndField) {
  model::ConnectorSpec spec = Block({{"url", "https://x"}, {"mode", "safe"}, {"urll", "typo"}});
  ConnectorFieldReader read(spec, {"url", "mode"});
  EXPECT_EQ(read.String("url"), "https://x");
  EXPECT_EQ(read.Enum("mode", kModes), "safe");
  EXPECT_EQ(read.String("absent"), std::nullopt);
  ASSERT_EQ(read.problems().size(), 1u);
  const model::ConnectorProblem& p = read.problems()[0];
  EXPECT_EQ(p.field, "spec.connector.urll");
  EXPECT_EQ(p.location.line, 13);
  EXPECT_EQ(p.ToString(),
            "clusters.yaml:13:5: spec.connector.urll: unknown field 'urll' (did you mean 'url'?); a demo connector "
            "reads type, timeout, qps, burst, url, mode");
}

TEST(ConnectorFieldReader, AWrongTypeOrValueIsAProblemOnThatField) {
  model::ConnectorSpec spec = Block({{"url", 8}, {"mode", "quick"}, {"nested", {{"a", 1}}}});
  ConnectorFieldReader read(spec, {"url", "mode", "nested"});
  EXPECT_EQ(read.String("url"), std::nullopt);
  EXPECT_EQ(read.Enum("mode", kModes), std::nullopt);
  EXPECT_EQ(read.String("nested"), std::nullopt);
  ASSERT_EQ(read.problems().size(), 3u);
  EXPECT_EQ(read.problems()[0].ToString(),
            "clusters.yaml:11:5: spec.connector.url: expected a string, got an integer (quote it: \"8\")");
  EXPECT_EQ(read.problems()[1].message, "invalid value 'quick' (allowed: fast, safe)");
  EXPECT_EQ(read.problems()[2].message, "expected a string, got a mapping");
}

TEST(ConnectorFieldReader, AProvidersOwnFindingNamesTheField) {
  model::ConnectorSpec spec = Block({{"url", "ftp://x"}});
  ConnectorFieldReader read(spec, {"url"});
  read.Report("url", "must be https");
  read.Report("unset", "ignored: the block does not set it");
  ASSERT_EQ(read.problems().size(), 1u);
  EXPECT_EQ(read.problems()[0].ToString(), "clusters.yaml:11:5: spec.connector.url: must be https");
}

TEST(ProblemsToStatus, IsOkWithoutProblemsAndOneInvalidArgumentListingThemOtherwise) {
  EXPECT_TRUE(ProblemsToStatus({}).ok());
  model::ConnectorSpec spec;
  spec.type = "demo";
  spec.Set("a", 1).Set("b", 2);  // built in code: no position
  Status s = ProblemsToStatus(ConnectorFieldReader(spec, {}).problems());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "spec.connector.a: unknown field 'a'; a demo connector reads type, timeout, qps, burst; "
            "spec.connector.b: unknown field 'b'; a demo connector reads type, timeout, qps, burst");
}

}  // namespace
}  // namespace gpufed::connectors
