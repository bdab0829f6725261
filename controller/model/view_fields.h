#pragma once
// The fields of the JSON views (views.h) as data: path, type, meaning, the values a
// field can take and an example. One table per view is the single source for what
// `when`/`require` paths accept (config/ checks rules against it), for `gpufed docs
// rules` and `gpufed docs lua`, and for docs/policy-reference.md; view_fields_test
// checks that the views build exactly these fields.
#include <span>
#include <string>
#include <string_view>

#include "controller/model/policy.h"

namespace gpufed::model {

enum class FieldType {
  kString,
  kInteger,
  kNumber,
  kBoolean,
  kBytes,       // a quantity in bytes; rules may write 80Gi
  kCores,       // a quantity in CPU cores; rules may write 500m
  kSeconds,     // a duration in seconds; rules may write 8h
  kDecimal,     // money or a price as a plain decimal number
  kStringList,
  kPoolList,    // the cluster's node pools (Lua only; rules use node.* paths)
};
// "string", "integer", "bytes", "list of strings", ...
const char* FieldTypeName(FieldType type);
// With its article: "a string", "an integer", "a list of strings".
std::string FieldTypeWithArticle(FieldType type);
// Numbers in the view: integer, number, bytes, cores, seconds, decimal.
bool IsNumeric(FieldType type);

// Where the values of a field come from, so rules naming a value that cannot occur are
// errors ("unknown tenant 'frauds'") instead of rules that never match.
enum class FieldDomain {
  kFree,          // anything
  kEnum,          // ViewField::values
  kTenant,        // Tenant names of the repository
  kCluster,       // Cluster names
  kPool,          // node pool names of any Cluster
  kGpuModel,      // GPU models of any node pool
  kMigProfile,    // MIG profiles any node pool offers
  kDataset,       // datasets the Clusters hold or the Workloads name
  kPriorityClass, // priority class names (built in and from Policies)
  kConnectorType, // connector types the Clusters use (the providers are the registry's)
};
// "tenant", "cluster", "GPU model", ... as used in "unknown GPU model 'H100'".
const char* FieldDomainName(FieldDomain domain);

struct ViewField {
  std::string_view path;         // "resources.gpus"; a map's keys are "*": "metadata.labels.*"
  FieldType type;
  std::string_view description;  // one sentence, for the reference
  std::string_view example;      // a matcher as written in a rule, e.g. "{gte: 8}"
  FieldDomain domain = FieldDomain::kFree;
  std::span<const std::string_view> values = {};  // kEnum: the allowed values
  bool optional = false;         // absent from the view when unset (Lua sees nil)
  bool in_rules = true;          // false: Lua only
  std::string_view key = {};     // a map's example key, for the reference ("team")
};

// The view `w` of a workload (when paths, optionally prefixed "workload.").
std::span<const ViewField> WorkloadViewFields();
// The view `c` of a cluster (require paths "cluster.").
std::span<const ViewField> ClusterViewFields();
// The view of one node pool (require paths "node.", and each of `c.nodePools`).
std::span<const ViewField> NodePoolViewFields();

// The field at `path` ("metadata.labels.team" finds "metadata.labels.*"); null if none.
const ViewField* FindViewField(std::span<const ViewField> fields, std::string_view path);

// Why `path` names no field a rule may use, with a "did you mean" where one is close;
// "" when it does. `prefix` is how rules write the view ("cluster.", "node.", "").
std::string DescribeUnknownPath(std::span<const ViewField> fields, std::string_view path, std::string_view prefix);

// The rule operators (a plain value means equality, listed first as "=").
struct RuleOperator {
  std::string_view name;         // "in", "gte", ...; "=" for a plain value
  MatchOp op;
  std::string_view operand;      // "a list of values", "a number or a quantity", ...
  std::string_view meaning;
  bool numeric = false;          // compares numbers: only on numeric fields
  bool on_lists = false;         // tests list members: only on list fields
};
std::span<const RuleOperator> RuleOperators();
const RuleOperator* FindRuleOperator(std::string_view name);
// Whether `op` can ever be true of a field of `type`.
bool OperatorApplies(const RuleOperator& op, FieldType type);

// Allowed values of the enums rules and documents use (also what the decoders accept).
std::span<const std::string_view> WorkloadTypeNames();
std::span<const std::string_view> SensitivityNames();
std::span<const std::string_view> TopologyNames();
std::span<const std::string_view> GpuSharingNames();
std::span<const std::string_view> IsolationNames();

}  // namespace gpufed::model
