// Policy rules: `when` (workload fields) and `require` (cluster or node pool fields)
// conditions. Paths, operators and values are checked against the view tables
// (model/view_fields.h): a condition that can never hold is an error, not a rule that
// silently never matches.
#include <regex>

#include "controller/common/text.h"
#include "controller/config/decoders.h"
#include "controller/model/view_fields.h"

namespace gpufed::config {

std::optional<nlohmann::json> ScalarToJson(const YamlField& f) {
  const std::string& s = f.node().Scalar();
  switch (ClassifyScalar(f.node())) {
    case ScalarKind::kNull: return nlohmann::json(nullptr);
    case ScalarKind::kBool: return nlohmann::json(s[0] == 't' || s[0] == 'T');
    case ScalarKind::kInt:
      if (const std::optional<int64_t> v = ParseYamlInt(s)) return nlohmann::json(*v);
      f.Error("integer " + s + " is out of range [" + std::to_string(INT64_MIN) + ", " + std::to_string(INT64_MAX) +
              "]");
      return std::nullopt;
    case ScalarKind::kFloat:
      if (const std::optional<double> v = ParseYamlFloat(s)) return nlohmann::json(*v);
      f.Error("number " + s + " cannot be represented (beyond a double's range, below its precision, or not finite)");
      return std::nullopt;
    case ScalarKind::kString: return nlohmann::json(s);
  }
  return nlohmann::json(s);
}

namespace {

// One value a condition compares with, and where it was written.
struct Operand {
  YamlField field;
  nlohmann::json value;
};

std::optional<Operand> ScalarOperand(const YamlField& f) {
  if (!f.node().IsScalar() || ClassifyScalar(f.node()) == ScalarKind::kNull) {
    f.Error("expected a string, number or boolean");
    return std::nullopt;
  }
  std::optional<nlohmann::json> value = ScalarToJson(f);
  if (!value) return std::nullopt;
  return Operand{f, std::move(*value)};
}

std::optional<std::vector<Operand>> ScalarListOperand(const YamlField& f) {
  if (!f.is_sequence()) {
    f.Error("expected a list of values");
    return std::nullopt;
  }
  std::vector<Operand> list;
  for (const YamlField& element : f.Elements()) {
    std::optional<Operand> v = ScalarOperand(element);
    if (!v) return std::nullopt;
    list.push_back(std::move(*v));
  }
  return list;
}

ReferenceKind DomainReference(model::FieldDomain domain) {
  switch (domain) {
    case model::FieldDomain::kTenant: return ReferenceKind::kTenant;
    case model::FieldDomain::kCluster: return ReferenceKind::kCluster;
    case model::FieldDomain::kPool: return ReferenceKind::kPool;
    case model::FieldDomain::kGpuModel: return ReferenceKind::kGpuModel;
    case model::FieldDomain::kMigProfile: return ReferenceKind::kMigProfile;
    case model::FieldDomain::kDataset: return ReferenceKind::kDataset;
    case model::FieldDomain::kConnectorType: return ReferenceKind::kConnectorType;
    default: return ReferenceKind::kPriorityClass;
  }
}

bool IsNumberText(const nlohmann::json& v, model::FieldType type) {
  if (v.is_number()) return true;
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  return Quantity::Parse(s).ok() || (type == model::FieldType::kSeconds && Duration::Parse(s).ok());
}

// Whether `v` can ever equal a value of the field, and what is wrong when it cannot.
// Durations written for a seconds field become seconds, as the view holds them.
bool CheckValue(const model::ViewField& field, const std::string& path, Operand& v, bool numeric_op) {
  const model::FieldType type = field.type;
  if (type == model::FieldType::kSeconds && v.value.is_string()) {
    if (Result<Duration> d = Duration::Parse(v.value.get<std::string>()); d.ok()) v.value = d->seconds();
  }
  if (model::IsNumeric(type) || numeric_op) {
    if (IsNumberText(v.value, type)) return true;
    v.field.Error(std::string(numeric_op ? "expected a number or a quantity such as 40Gi"
                                         : "'" + (v.value.is_string() ? v.value.get<std::string>() : v.value.dump()) +
                                               "' is not a number") +
                  "; " + path + " is " + model::FieldTypeWithArticle(type) +
                  (type == model::FieldType::kSeconds ? " (durations such as 8h work)"
                   : path == "priority"               ? " (class names are in priorityClass)"
                                                      : ""));
    return false;
  }
  if (type == model::FieldType::kBoolean) {
    if (v.value.is_boolean() || v.value == "true" || v.value == "false") return true;
    v.field.Error(path + " is true or false; " + v.value.dump() + " never matches");
    return false;
  }
  if (!v.value.is_string()) return true;  // 80 equals "80": numbers may name strings
  const std::string& text = v.value.get_ref<const std::string&>();
  if (field.domain == model::FieldDomain::kEnum) {
    for (std::string_view allowed : field.values) {
      if (allowed == text) return true;
    }
    std::vector<std::string> names(field.values.begin(), field.values.end());
    std::string best = ClosestMatch(text, field.values);
    v.field.Error("invalid value '" + text + "' for " + path + " (allowed: " + Join(names, ", ") + ")" +
                  (best.empty() ? "" : "; did you mean '" + best + "'?"));
    return false;
  }
  if (field.domain != model::FieldDomain::kFree) {
    v.field.NoteReference(DomainReference(field.domain), text, /*rule_value=*/true);
  }
  return true;
}

// `path: value` or `path: {op: operand}`, checked against `fields`.
std::optional<model::Condition> DecodeCondition(const std::string& path, const YamlField& f, bool is_require) {
  model::Condition c;
  c.path = path;
  c.location = f.location();
  std::string rest = path;
  std::string prefix;
  if (is_require) {
    if (rest.rfind("cluster.", 0) == 0) {
      prefix = "cluster.";
    } else if (rest.rfind("node.", 0) == 0) {
      prefix = "node.";
      c.on_node = true;
    } else {
      f.Error("require paths start with 'cluster.' or 'node.' (e.g. cluster.zone)");
      return std::nullopt;
    }
  } else if (rest.rfind("workload.", 0) == 0) {
    prefix = "workload.";
  }
  rest = rest.substr(prefix.size());
  static const std::regex kPath(R"([A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*)");
  if (!std::regex_match(rest, kPath)) {
    f.Error("invalid field path '" + path + "'");
    return std::nullopt;
  }
  for (size_t start = 0; start <= rest.size();) {
    size_t dot = rest.find('.', start);
    if (dot == std::string::npos) dot = rest.size();
    c.segments.push_back(rest.substr(start, dot - start));
    start = dot + 1;
  }
  const std::span<const model::ViewField> fields = !is_require ? model::WorkloadViewFields()
                                                   : c.on_node ? model::NodePoolViewFields()
                                                               : model::ClusterViewFields();
  std::string unknown = model::DescribeUnknownPath(fields, rest, prefix == "workload." ? "" : prefix);
  if (!unknown.empty()) {
    f.Error(unknown);
    return std::nullopt;
  }
  const model::ViewField& field = *model::FindViewField(fields, rest);

  std::vector<Operand> values;  // the values compared with (none for exists)
  const model::RuleOperator* op = model::FindRuleOperator("=");
  YamlField op_field = f;
  if (f.node().IsScalar()) {
    std::optional<Operand> v = ScalarOperand(f);
    if (!v) return std::nullopt;
    values.push_back(std::move(*v));
  } else {
    std::vector<std::string_view> names;
    for (const model::RuleOperator& o : model::RuleOperators()) {
      if (o.name != "=") names.push_back(o.name);
    }
    std::vector<std::string> listed(names.begin(), names.end());
    if (!f.is_map() || f.node().size() != 1) {
      f.Error("expected a value or a mapping with exactly one operator (" + Join(listed, ", ") + ")");
      return std::nullopt;
    }
    if (!f.ExpectObject(names)) return std::nullopt;  // unknown operators, with "did you mean"
    auto [op_name, operand] = f.Entries().front();
    op = model::FindRuleOperator(op_name);
    if (op == nullptr || op->name == "=") return std::nullopt;  // reported by ExpectObject
    op_field = operand;
    if (op->op == model::MatchOp::kExists) {
      std::optional<bool> b = operand.Bool(Required::kYes);
      if (!b) return std::nullopt;
      c.operand = *b;
    } else if (op->op == model::MatchOp::kIn || op->op == model::MatchOp::kNotIn ||
               op->op == model::MatchOp::kContainsAll) {
      std::optional<std::vector<Operand>> list = ScalarListOperand(operand);
      if (!list) return std::nullopt;
      values = std::move(*list);
    } else {
      std::optional<Operand> v = ScalarOperand(operand);
      if (!v) return std::nullopt;
      values.push_back(std::move(*v));
    }
  }
  c.op = op->op;
  const std::string shown = prefix == "workload." ? rest : prefix + rest;
  if (!model::OperatorApplies(*op, field.type)) {
    const char* what = op->numeric    ? " compares numbers"
                       : op->on_lists ? " tests the members of a list"
                                      : " cannot test a list of node pools";
    op_field.Error(std::string(op->name == "=" ? "a plain value" : "operator " + std::string(op->name)) + what + "; " +
                   shown + " is " + model::FieldTypeWithArticle(field.type));
    return std::nullopt;
  }
  bool ok = true;
  for (Operand& v : values) ok = CheckValue(field, shown, v, op->numeric) && ok;
  if (!ok) return std::nullopt;
  if (op->op != model::MatchOp::kExists) {
    if (f.node().IsScalar() || op->op == model::MatchOp::kContains || op->numeric) {
      c.operand = values.front().value;
    } else {
      c.operand = nlohmann::json::array();
      for (const Operand& v : values) c.operand.push_back(v.value);
    }
  }
  return c;
}

void DecodeConditions(const YamlField& f, bool is_require, std::vector<model::Condition>& out) {
  if (!f.defined()) return;
  if (!f.is_map()) {
    f.Error("expected a mapping of field paths to values");
    return;
  }
  for (const auto& [path, value] : f.Entries()) {
    if (auto c = DecodeCondition(path, value, is_require)) out.push_back(std::move(*c));
  }
}

}  // namespace

void DecodeRule(const YamlField& f, model::Rule& out) {
  out.location = f.location();
  if (!f.ExpectObject({"name", "description", "when", "require"})) return;
  if (auto v = f.Child("name").String(Required::kYes)) out.name = *v;
  if (auto v = f.Child("description").String()) out.description = *v;
  DecodeConditions(f.Child("when"), false, out.when);
  YamlField require = f.Child("require");
  if (!require.defined()) require.Error("missing required field");
  DecodeConditions(require, true, out.require);
}

}  // namespace gpufed::config
