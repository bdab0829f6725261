#include "controller/config/yaml_field.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "controller/config/loader.h"

namespace gpufed::config {
namespace {

// The first document of `text` (the stream owns the nodes the fields read).
const YamlNode& FirstDocument(const YamlStream& stream) {
  EXPECT_FALSE(stream.problem().has_value()) << stream.problem()->message;
  return stream.documents().empty() ? YamlNode::Missing() : *stream.documents()[0];
}

ScalarKind Kind(const std::string& yaml) {
  const YamlStream stream = YamlStream::Parse("v: " + yaml, {});
  return ClassifyScalar(*FirstDocument(stream).Find("v"));
}

TEST(YamlField, ClassifiesScalarsLikeYaml12Core) {
  EXPECT_EQ(Kind("8"), ScalarKind::kInt);
  EXPECT_EQ(Kind("\"8\""), ScalarKind::kString);
  EXPECT_EQ(Kind("1.5"), ScalarKind::kFloat);
  EXPECT_EQ(Kind("true"), ScalarKind::kBool);
  EXPECT_EQ(Kind("yes"), ScalarKind::kString);  // YAML 1.1 booleans are strings in 1.2
  EXPECT_EQ(Kind("~"), ScalarKind::kNull);
  EXPECT_EQ(Kind("80Gi"), ScalarKind::kString);
}

TEST(YamlField, ValidatesNames) {
  EXPECT_TRUE(IsValidName("munich-dgx"));
  EXPECT_TRUE(IsValidName("a.b-1"));
  EXPECT_FALSE(IsValidName("Munich"));
  EXPECT_FALSE(IsValidName("-a"));
  EXPECT_FALSE(IsValidName(std::string(64, 'a')));
}

TEST(YamlField, ReportsUnknownAndDuplicateKeys) {
  Diagnostics diagnostics;
  DocumentContext context{"f.yaml", &diagnostics, nullptr};
  const YamlStream stream = YamlStream::Parse("gpus: 1\ngpuz: 2\n", {});
  YamlField root = YamlField::Root(FirstDocument(stream), &context);
  EXPECT_TRUE(root.ExpectObject({"gpus", "cpu"}));
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics.items()[0].ToString(), "f.yaml:2:1: error: gpuz: unknown field 'gpuz' (did you mean 'gpus'?)");
}

TEST(YamlField, IntegersAreReadExactlyOrNotAtAll) {
  EXPECT_EQ(ParseYamlInt("42"), 42);
  EXPECT_EQ(ParseYamlInt("+42"), 42);
  EXPECT_EQ(ParseYamlInt("-42"), -42);
  EXPECT_EQ(ParseYamlInt("0x1F"), 31);
  EXPECT_EQ(ParseYamlInt("0o17"), 15);  // strtoll read this as 0
  EXPECT_EQ(ParseYamlInt("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(ParseYamlInt("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(ParseYamlInt("0x7fffffffffffffff"), INT64_MAX);
  for (std::string_view bad : {"9223372036854775808", "-9223372036854775809", "99999999999999999999",
                               "0x8000000000000000", "0o1777777777777777777777", "", "1e3", "1.0", "0x", "--1", " 1"}) {
    EXPECT_EQ(ParseYamlInt(bad), std::nullopt) << bad;
  }
}

TEST(YamlField, FloatsAreFiniteAndNeverSilentlyZero) {
  EXPECT_EQ(ParseYamlFloat("1.5"), 1.5);
  EXPECT_EQ(ParseYamlFloat("2"), 2.0);
  EXPECT_EQ(ParseYamlFloat("1e3"), 1000.0);
  EXPECT_EQ(ParseYamlFloat(".5"), 0.5);
  EXPECT_EQ(ParseYamlFloat("0e-400"), 0.0);  // zero written small is still zero
  EXPECT_EQ(ParseYamlFloat("-0.0"), 0.0);
  EXPECT_EQ(ParseYamlFloat("2.2250738585072014e-308"), 2.2250738585072014e-308);  // DBL_MIN
  for (std::string_view bad : {"1e400", "-1e400", "1e-400", "1e-128e", "1e-310", ".inf", "-.inf", ".nan", "0x10", "inf",
                               "nan", " 1", "1 ", "", "1.5.2"}) {
    EXPECT_EQ(ParseYamlFloat(bad), std::nullopt) << bad;
  }
}

// Accessors report what a number cannot be, with the field's position and path.
TEST(YamlField, NumberAccessorsReportInsteadOfClamping) {
  Diagnostics diagnostics;
  DocumentContext context{"f.yaml", &diagnostics, nullptr};
  const YamlStream stream =
      YamlStream::Parse("a: 99999999999999999999\nb: 1e-400\nc: 1e400\nd: .nan\ne: 0o17\nf: 2.5\ng: 1e-128\n", {});
  YamlField root = YamlField::Root(FirstDocument(stream), &context);
  EXPECT_EQ(root.Child("a").Int(0, INT64_MAX), std::nullopt);
  EXPECT_EQ(root.Child("b").Number(0, 1), std::nullopt);
  EXPECT_EQ(root.Child("c").Number(0, 1e6), std::nullopt);
  EXPECT_EQ(root.Child("d").Number(0, 1e6), std::nullopt);
  EXPECT_EQ(root.Child("e").Int(0, 100), 15);
  EXPECT_EQ(root.Child("f").Number(0, 10), 2.5);
  EXPECT_EQ(root.Child("g").QuantityValue(Quantity(), Quantity::FromUnits(10)), std::nullopt);
  ASSERT_EQ(diagnostics.size(), 5u);
  const auto& d = diagnostics.items();
  EXPECT_EQ(d[0].ToString(),
            "f.yaml:1:4: error: a: value 99999999999999999999 is out of range [0, 9223372036854775807]");
  EXPECT_EQ(d[1].ToString(), "f.yaml:2:4: error: b: value 1e-400 is too small to represent (it would read as 0)");
  EXPECT_EQ(d[2].ToString(), "f.yaml:3:4: error: c: value 1e400 is out of range");
  EXPECT_EQ(d[3].ToString(), "f.yaml:4:4: error: d: value .nan is out of range");
  EXPECT_EQ(d[4].field, "g");
  EXPECT_THAT(d[4].message, testing::HasSubstr("quantity '1e-128' is below 1m"));
}

// ---- Through the loader, as `gpufed validate` and the API (Controller::Submit) call it

std::string Dump(const LoadResult& r) {
  std::string s;
  for (const Diagnostic& d : r.diagnostics.items()) s += "  " + d.ToString() + "\n";
  return s;
}

model::Config TenantRepo() {
  LoadResult repo =
      LoadText("apiVersion: gpufed/v1alpha1\nkind: Tenant\nmetadata: {name: team-a}\nspec: {weight: 1}\n", "t.yaml");
  EXPECT_TRUE(repo.ok()) << Dump(repo);
  return repo.config;
}

// The one error a workload body gives, which must name the file, line, column and field.
Diagnostic OnlyError(const std::string& body, const std::string& file, const model::Config& context) {
  LoadResult r = LoadText(body, file, &context);
  EXPECT_EQ(r.diagnostics.size(), 1u) << Dump(r);
  return r.diagnostics.empty() ? Diagnostic{} : r.diagnostics.items()[0];
}

// The hostile input of the issue: `cpu: 1e-128` divided by an overflowed zero (SIGFPE in
// `gpufed validate`, and in the controller through the API). Now a validation error at
// spec.resources.cpu, in YAML and in JSON.
TEST(YamlField, HostileCpuInAWorkloadIsAnErrorAtItsField) {
  const model::Config repo = TenantRepo();
  const std::string yaml =
      "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: w}\nspec:\n  tenant: team-a\n"
      "  resources: {gpus: 1, cpu: 1e-128}\n";
  Diagnostic d = OnlyError(yaml, "api/w.yaml", repo);
  EXPECT_EQ(d.file, "api/w.yaml");
  EXPECT_EQ(d.line, 6);
  EXPECT_EQ(d.column, static_cast<int>(std::string("  resources: {gpus: 1, cpu: ").size()) + 1);
  EXPECT_EQ(d.field, "spec.resources.cpu");
  EXPECT_THAT(d.message, testing::HasSubstr("quantity '1e-128' is below 1m"));

  const std::string json =
      R"({"apiVersion": "gpufed/v1alpha1", "kind": "Workload", "metadata": {"name": "w"},)"
      "\n"
      R"( "spec": {"tenant": "team-a", "resources": {"gpus": 1, "cpu": 1E-400, "memory": "1e400"}}})";
  LoadResult r = LoadText(json, "request.json", &repo);
  ASSERT_EQ(r.diagnostics.size(), 2u) << Dump(r);
  EXPECT_EQ(r.diagnostics.items()[0].field, "spec.resources.cpu");
  EXPECT_EQ(r.diagnostics.items()[0].line, 2);
  EXPECT_THAT(r.diagnostics.items()[0].message, testing::HasSubstr("is below 1m"));
  EXPECT_EQ(r.diagnostics.items()[1].field, "spec.resources.memory");
  EXPECT_THAT(r.diagnostics.items()[1].message, testing::HasSubstr("is too large"));
}

TEST(YamlField, OutOfRangeNumbersInAWorkloadAreErrorsAtTheirFields) {
  const model::Config repo = TenantRepo();
  auto workload = [](const std::string& line) {
    return "apiVersion: gpufed/v1alpha1\nkind: Workload\nmetadata: {name: w}\nspec:\n  tenant: team-a\n"
           "  resources: {gpus: 1}\n" +
           line + "\n";
  };
  struct Case {
    std::string line, field, message;
  };
  for (const Case& c : {
           Case{"  maxCost: \"9223372036854.775808 EUR\"", "spec.maxCost", "is too large"},
           Case{"  maxCost: \"-9223372036854.775808 EUR\"", "spec.maxCost", "is too large"},
           Case{"  maxCost: \"1.0000001 EUR\"", "spec.maxCost", "more than 6 decimals"},
           Case{"  priority: 99999999999999999999", "spec.priority", "out of range"},
           Case{"  priority: 1e3", "spec.priority", "not a whole number"},
           Case{"  priority: 1e-400", "spec.priority", "not a whole number"},
           Case{"  durationHint: 1e400s", "spec.durationHint", "needs a unit"},
           Case{"  durationHint: 99999999999999999999h", "spec.durationHint", "out of range"},
       }) {
    SCOPED_TRACE(c.line);
    Diagnostic d = OnlyError(workload(c.line), "w.yaml", repo);
    EXPECT_EQ(d.file, "w.yaml");
    EXPECT_EQ(d.line, 7);
    EXPECT_EQ(d.field, c.field);
    EXPECT_THAT(d.message, testing::HasSubstr(c.message));
  }
  // The largest amount is exact, and so is its neighbour below.
  for (const char* cost : {"9223372036854.775807 EUR", "9223372036854.775806 EUR"}) {
    LoadResult ok = LoadText(workload(std::string("  maxCost: \"") + cost + "\""), "w.yaml", &repo);
    ASSERT_TRUE(ok.ok()) << Dump(ok);
    ASSERT_TRUE(ok.config.workloads[0].max_cost.has_value());
    EXPECT_EQ(ok.config.workloads[0].max_cost->ToString(), cost);
  }
}

// A rule compares with numbers exactly as written: one no int64 or double holds is an
// error, not a comparison with 0, infinity or a wrapped value.
TEST(YamlField, RuleAndParamNumbersMustBeRepresentable) {
  auto policy = [](const std::string& when, const std::string& params) {
    return "apiVersion: gpufed/v1alpha1\nkind: Policy\nmetadata: {name: p}\nspec:\n  rules:\n    - name: r\n"
           "      when: {resources.gpus: {gt: " +
           when + "}}\n      require: {cluster.zone: {in: [eu]}}\n" + "  params: {x: " + params + "}\n";
  };
  EXPECT_TRUE(LoadText(policy("0x10", "1e3"), "p.yaml").ok()) << Dump(LoadText(policy("0x10", "1e3"), "p.yaml"));
  for (const char* bad : {"1e400", "1e-400", "99999999999999999999", ".nan"}) {
    LoadResult r = LoadText(policy(bad, "1"), "p.yaml");
    ASSERT_EQ(r.diagnostics.size(), 1u) << bad << Dump(r);
    EXPECT_EQ(r.diagnostics.items()[0].line, 7) << bad;
    EXPECT_EQ(r.diagnostics.items()[0].field, "spec.rules[0].when.resources.gpus.gt") << bad;
    LoadResult p = LoadText(policy("1", bad), "p.yaml");
    ASSERT_EQ(p.diagnostics.size(), 1u) << bad << Dump(p);
    EXPECT_EQ(p.diagnostics.items()[0].field, "spec.params.x") << bad;
  }
}

}  // namespace
}  // namespace gpufed::config
