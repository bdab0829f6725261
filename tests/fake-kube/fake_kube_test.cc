// The fake's own rules: selectors and the schema checks that make a misspelt field fail.
#include <gtest/gtest.h>

#include "tests/fake-kube/schema.h"
#include "tests/fake-kube/selectors.h"
#include "tests/fake-kube/state.h"

namespace gpufed::testing {
namespace {

using nlohmann::json;

json MinimalJob() {
  return json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "gpufed-w-a1", "labels": {"gpufed.io/workload-uid": "w"}},
    "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never",
      "containers": [{"name": "main", "image": "busybox",
                      "resources": {"limits": {"nvidia.com/gpu": "2"}, "requests": {"nvidia.com/gpu": "2"}}}]}}}})");
}

TEST(LabelSelector, ParsesEveryOperator) {
  auto s = Selector::ParseLabels("a, !b, c=1, d==2, e!=3, f in (x, y), g notin (z)");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->requirements().size(), 7u);
  EXPECT_TRUE(s->Matches({{"a", ""}, {"c", "1"}, {"d", "2"}, {"e", "4"}, {"f", "y"}, {"g", "q"}}));
  EXPECT_FALSE(s->Matches({{"a", ""}, {"b", ""}, {"c", "1"}, {"d", "2"}, {"f", "y"}}));
  EXPECT_FALSE(s->Matches({{"a", ""}, {"c", "1"}, {"d", "2"}, {"f", "w"}}));
}

TEST(LabelSelector, RejectsMalformed) {
  EXPECT_FALSE(Selector::ParseLabels("a in x").has_value());
  EXPECT_FALSE(Selector::ParseLabels("=x").has_value());
}

TEST(FieldSelector, ParsesPhaseExclusions) {
  auto s = Selector::ParseFields("status.phase!=Succeeded,status.phase!=Failed");
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->Matches({{"status.phase", "Running"}}));
  EXPECT_FALSE(s->Matches({{"status.phase", "Failed"}}));
}

TEST(JobSchema, AcceptsAWellFormedJob) {
  DecodeResult d = Decode(MinimalJob(), "Job");
  EXPECT_TRUE(d.unknown_fields.empty());
  EXPECT_TRUE(d.type_errors.empty());
  EXPECT_TRUE(ValidateJob(MinimalJob()).empty());
}

TEST(JobSchema, ReportsMisspeltFieldWithItsPath) {
  json job = MinimalJob();
  job["spec"]["template"]["spec"]["containers"][0]["resorces"] = json::object();
  job["spec"]["activeDeadline"] = 5;
  DecodeResult d = Decode(job, "Job");
  EXPECT_EQ(d.unknown_fields,
            (std::vector<std::string>{"spec.activeDeadline", "spec.template.spec.containers[0].resorces"}));
}

TEST(JobSchema, ReportsTypeMismatch) {
  json job = MinimalJob();
  job["spec"]["backoffLimit"] = "0";
  job["spec"]["template"]["spec"]["nodeSelector"] = {{"a", 1}};
  EXPECT_EQ(Decode(job, "Job").type_errors.size(), 2u);
}

TEST(JobValidation, RejectsRestartPolicyAlwaysAndMissingImage) {
  json job = MinimalJob();
  job["spec"]["template"]["spec"]["restartPolicy"] = "Always";
  job["spec"]["template"]["spec"]["containers"][0].erase("image");
  std::vector<FieldError> errs = ValidateJob(job);
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_EQ(errs[0].field, "spec.template.spec.restartPolicy");
  EXPECT_EQ(errs[1].field, "spec.template.spec.containers[0].image");
}

TEST(JobValidation, RejectsExtendedResourceRequestWithoutEqualLimit) {
  json job = MinimalJob();
  job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "1";
  ASSERT_EQ(ValidateJob(job).size(), 1u);
}

TEST(JobValidation, RejectsBadNamesAndLabels) {
  json job = MinimalJob();
  job["metadata"]["name"] = "Has_Upper";
  job["metadata"]["labels"]["gpufed.io/x"] = "-bad-";
  EXPECT_EQ(ValidateJob(job).size(), 2u);
}

TEST(Route, MapsTheConnectorsPaths) {
  EXPECT_EQ(ParseRoute("GET", "/api/v1/nodes").verb, "list");
  Route r = ParseRoute("DELETE", "/apis/batch/v1/namespaces/ml/jobs/j1");
  EXPECT_EQ(r.verb, "delete");
  EXPECT_EQ(r.ns, "ml");
  EXPECT_EQ(r.name, "j1");
  EXPECT_EQ(ParseRoute("GET", "/api/v1/namespaces/ml/pods").resource, "pods");
  EXPECT_EQ(ParseRoute("POST", "/api/v1/nodes").resource, "");
}

}  // namespace
}  // namespace gpufed::testing
