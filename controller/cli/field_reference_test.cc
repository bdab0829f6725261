#include "controller/cli/field_reference.h"

#include <gtest/gtest.h>

#include "schemas/schema_files.h"

namespace gpufed::cli {
namespace {

TEST(FieldReference, EveryKindHasItsTableFromTheEmbeddedSchemas) {
  Result<std::string> reference = FieldReference(schemas::Files());
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  for (const char* kind :
       {"Cluster", "Workload", "Tenant", "Policy", "PolicyTest", "AuditSink", "ExchangeRates", "AuditWitness"}) {
    EXPECT_NE(reference->find("\n## " + std::string(kind) + "\n"), std::string::npos) << kind;
  }
  // A nested field with its common type, a list element's field, a variant's field.
  EXPECT_NE(reference->find("| `spec.health.lostAfter` | duration |  | After failing to answer this long (default 10m"),
            std::string::npos);
  EXPECT_NE(reference->find("| `spec.nodePools[].gpu.model` | string | yes |"), std::string::npos);
  EXPECT_NE(reference->find("| `spec.connector.endpoint` (type: slurm) |"), std::string::npos);
  EXPECT_NE(reference->find("| `metadata.name` | name | yes |"), std::string::npos);
}

std::map<std::string, std::string_view> Files(std::string_view kind_schema) {
  static constexpr std::string_view kRoot = R"({"allOf": [{"if": {"properties": {"kind": {"const": "Thing"}}},
                                                           "then": {"$ref": "thing.schema.json"}}]})";
  static constexpr std::string_view kCommon = R"({"$defs": {"duration": {"type": "string"}}})";
  return {{"gpufed.schema.json", kRoot}, {"common.schema.json", kCommon}, {"thing.schema.json", kind_schema}};
}

TEST(FieldReference, TypesValuesAndTableCells) {
  Result<std::string> reference = FieldReference(Files(R"({
    "description": "A thing.",
    "properties": {"spec": {"type": "object", "required": ["mode"], "properties": {
      "mode": {"description": "How | when.\nSecond line.", "enum": ["a", "b"]},
      "count": {"type": "integer", "minimum": 1, "maximum": 8},
      "every": {"$ref": "common.schema.json#/$defs/duration"},
      "tags": {"type": "array", "items": {"type": "string"}},
      "either": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
      "prices": {"type": "object", "additionalProperties": {"type": "number"}}}}}})"));
  ASSERT_TRUE(reference.ok()) << reference.status().ToString();
  EXPECT_NE(reference->find("\n## Thing\n\n`thing.schema.json`: A thing.\n"), std::string::npos) << *reference;
  EXPECT_NE(reference->find("| `spec.mode` |  | yes | How \\| when. Second line. | `a`, `b` |"), std::string::npos)
      << *reference;
  EXPECT_NE(reference->find("| `spec.count` | integer |  |  | at least 1, at most 8 |"), std::string::npos);
  EXPECT_NE(reference->find("| `spec.every` | duration |"), std::string::npos);
  EXPECT_NE(reference->find("| `spec.tags` | list of string |"), std::string::npos);
  EXPECT_NE(reference->find("| `spec.either` | string or integer |"), std::string::npos);
  EXPECT_NE(reference->find("| `spec.prices` | map of number |"), std::string::npos);
}

TEST(FieldReference, LoopingOrBrokenReferencesAreErrorsNotCrashes) {
  Result<std::string> loop = FieldReference(Files(R"({"properties": {"spec": {"$ref": "#/$defs/a"}},
                                                      "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}})"));
  EXPECT_FALSE(loop.ok());
  Result<std::string> nested = FieldReference(Files(R"({"properties": {"spec": {"$ref": "#/$defs/n"}},
      "$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}}})"));
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.status().message().find("nested deeper"), std::string::npos) << nested.status().message();
  EXPECT_FALSE(FieldReference(Files(R"({"properties": {"spec": {"$ref": "missing.json#/x"}}})")).ok());
  EXPECT_FALSE(FieldReference(Files(R"({"properties": {"spec": {"$ref": 7}}})")).ok());
  EXPECT_FALSE(FieldReference(Files(R"({"properties": {"spec": {"$ref": "#nopointer"}}})")).ok());
  EXPECT_FALSE(FieldReference(Files("not json")).ok());
}

}  // namespace
}  // namespace gpufed::cli
