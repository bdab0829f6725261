#include <regex>
#include <set>

#include "controller/config/decoders.h"

namespace gpufed::config {
namespace {

nlohmann::json ScalarToJson(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  switch (ClassifyScalar(node)) {
    case ScalarKind::kNull: return nullptr;
    case ScalarKind::kBool: return s[0] == 't' || s[0] == 'T';
    case ScalarKind::kInt: return std::strtoll(s.c_str(), nullptr, 10);
    case ScalarKind::kFloat: return std::strtod(s.c_str(), nullptr);
    case ScalarKind::kString: return s;
  }
  return s;
}

std::optional<nlohmann::json> ScalarOperand(const YamlField& f) {
  if (!f.node().IsScalar() || ClassifyScalar(f.node()) == ScalarKind::kNull) {
    f.Error("expected a string, number or boolean");
    return std::nullopt;
  }
  return ScalarToJson(f.node());
}

std::optional<nlohmann::json> ScalarListOperand(const YamlField& f) {
  nlohmann::json list = nlohmann::json::array();
  if (!f.is_sequence()) {
    f.Error("expected a list of values");
    return std::nullopt;
  }
  for (const YamlField& element : f.Elements()) {
    std::optional<nlohmann::json> v = ScalarOperand(element);
    if (!v) return std::nullopt;
    list.push_back(*v);
  }
  return list;
}

// Any YAML value as JSON (for Policy params): scalars typed as in YAML 1.2 core.
std::optional<nlohmann::json> ToJson(const YamlField& f) {
  const YAML::Node& node = f.node();
  if (node.IsMap()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, value] : f.Entries()) {
      std::optional<nlohmann::json> v = ToJson(value);
      if (!v) return std::nullopt;
      out[key] = std::move(*v);
    }
    return out;
  }
  if (node.IsSequence()) {
    nlohmann::json out = nlohmann::json::array();
    for (const YamlField& element : f.Elements()) {
      std::optional<nlohmann::json> v = ToJson(element);
      if (!v) return std::nullopt;
      out.push_back(std::move(*v));
    }
    return out;
  }
  if (node.IsScalar()) return ScalarToJson(node);
  return nlohmann::json(nullptr);
}

// `path: value` or `path: {op: operand}`; `kind` is "when" or "require".
std::optional<model::Condition> DecodeCondition(const std::string& path, const YamlField& f, bool is_require) {
  model::Condition c;
  c.path = path;
  c.location = f.location();
  std::string rest = path;
  if (is_require) {
    if (rest.rfind("cluster.", 0) == 0) {
      rest = rest.substr(8);
    } else if (rest.rfind("node.", 0) == 0) {
      rest = rest.substr(5);
      c.on_node = true;
    } else {
      f.Error("require paths start with 'cluster.' or 'node.' (e.g. cluster.zone)");
      return std::nullopt;
    }
  } else if (rest.rfind("workload.", 0) == 0) {
    rest = rest.substr(9);
  }
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
  f.NoteReference(!is_require ? ReferenceKind::kWorkloadPath
                  : c.on_node  ? ReferenceKind::kNodePath
                               : ReferenceKind::kClusterPath,
                  rest);
  if (f.node().IsScalar()) {
    std::optional<nlohmann::json> v = ScalarOperand(f);
    if (!v) return std::nullopt;
    c.operand = *v;
    return c;
  }
  if (!f.is_map() || f.node().size() != 1) {
    f.Error("expected a value or a mapping with exactly one operator (in, notIn, exists, gte, gt, lte, lt, contains, "
            "containsAll)");
    return std::nullopt;
  }
  if (!f.ExpectObject({"in", "notIn", "exists", "gte", "gt", "lte", "lt", "contains", "containsAll"})) {
    return std::nullopt;
  }
  auto [op_name, operand] = f.Entries().front();
  static const std::set<std::string> kOperators = {"in", "notIn", "exists", "gte", "gt", "lte", "lt", "contains",
                                                   "containsAll"};
  if (!kOperators.count(op_name)) return std::nullopt;  // reported by ExpectObject
  std::optional<nlohmann::json> value;
  if (op_name == "in" || op_name == "notIn" || op_name == "containsAll") {
    value = ScalarListOperand(operand);
    c.op = op_name == "in" ? model::MatchOp::kIn : op_name == "notIn" ? model::MatchOp::kNotIn : model::MatchOp::kContainsAll;
  } else if (op_name == "exists") {
    if (auto b = operand.Bool(Required::kYes)) value = *b;
    c.op = model::MatchOp::kExists;
  } else if (op_name == "contains") {
    value = ScalarOperand(operand);
    c.op = model::MatchOp::kContains;
  } else {
    value = ScalarOperand(operand);
    if (value && value->is_string() && !Quantity::Parse(value->get<std::string>()).ok()) {
      operand.Error("expected a number or a quantity such as 40Gi");
      value.reset();
    } else if (value && value->is_boolean()) {
      operand.Error("expected a number or a quantity such as 40Gi");
      value.reset();
    }
    c.op = op_name == "gte" ? model::MatchOp::kGte
           : op_name == "gt" ? model::MatchOp::kGt
           : op_name == "lte" ? model::MatchOp::kLte
                              : model::MatchOp::kLt;
  }
  if (!value) return std::nullopt;
  c.operand = *value;
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

}  // namespace

void DecodePolicySpec(const YamlField& spec, model::Policy& out) {
  if (!spec.ExpectObject({"enforcement", "rules", "scoring", "burst", "priorityClasses", "lua", "import", "params"},
                         Required::kYes)) {
    return;
  }
  YamlField import = spec.Child("import");
  if (auto v = import.String()) {
    out.import = *v;
    import.NoteReference(ReferenceKind::kImport, *v);
  }
  YamlField params = spec.Child("params");
  if (params.defined()) {
    if (!params.is_map()) {
      params.Error("expected a mapping of parameter names to values");
    } else if (auto json = ToJson(params)) {
      out.params = std::move(*json);
    }
  }
  if (auto v = spec.Child("enforcement").Enum({"deny", "warn", "dryrun"})) {
    out.enforcement_set = true;
    out.enforcement = *v == "deny" ? model::Enforcement::kDeny
                      : *v == "warn" ? model::Enforcement::kWarn
                                     : model::Enforcement::kDryRun;
  }
  for (const YamlField& rule_field : spec.Child("rules").Elements()) {
    model::Rule rule;
    DecodeRule(rule_field, rule);
    for (const model::Rule& other : out.rules) {
      if (!rule.name.empty() && other.name == rule.name) {
        rule_field.Child("name").Error("duplicate rule name '" + rule.name + "'");
      }
    }
    out.rules.push_back(std::move(rule));
  }
  YamlField scoring = spec.Child("scoring");
  if (scoring.ExpectObject({"weights"})) {
    YamlField weights = scoring.Child("weights");
    if (weights.ExpectObject({"cost", "locality", "fragmentation", "onprem", "lua"})) {
      model::ScoringWeights w;
      if (auto v = weights.Child("cost").Number(0, 1e6)) w.cost = *v;
      if (auto v = weights.Child("locality").Number(0, 1e6)) w.locality = *v;
      if (auto v = weights.Child("fragmentation").Number(0, 1e6)) w.fragmentation = *v;
      if (auto v = weights.Child("onprem").Number(0, 1e6)) w.onprem = *v;
      if (auto v = weights.Child("lua").Number(0, 1e6)) w.lua = *v;
      out.weights = w;
    }
  }
  YamlField burst = spec.Child("burst");
  if (burst.ExpectObject({"queueWait", "queueDepth"})) {
    if (auto v = burst.Child("queueWait").DurationValue()) out.burst.queue_wait = *v;
    if (auto v = burst.Child("queueDepth").Int(0, 100000000)) out.burst.queue_depth = static_cast<int>(*v);
  }
  YamlField classes = spec.Child("priorityClasses");
  if (classes.defined() && !classes.is_map()) classes.Error("expected a mapping of class name to integer priority");
  for (const auto& [name, value] : classes.Entries()) {
    if (auto v = value.Int(-1000000000, 1000000000, Required::kYes)) out.priority_classes[name] = static_cast<int>(*v);
  }
  YamlField lua = spec.Child("lua");
  if (auto v = lua.StringList()) {
    out.lua_files = *v;
    std::vector<YamlField> elements = lua.Elements();
    for (size_t i = 0; i < v->size(); ++i) elements[i].NoteReference(ReferenceKind::kLuaFile, (*v)[i]);
  }
}

namespace {

void DecodeExpectation(const YamlField& f, model::Expectation& out) {
  if (!f.ExpectObject({"placed", "queued", "rejected"}, Required::kYes)) return;
  const YAML::Node& node = f.node();
  if (node.size() != 1) {
    f.Error("expect needs exactly one of placed, queued, rejected");
    return;
  }
  if (node["placed"].IsDefined()) {
    out.outcome = model::ExpectedOutcome::kPlaced;
    YamlField placed = f.Child("placed");
    if (placed.ExpectObject({"cluster", "provider", "zone", "region"})) {
      if (auto v = placed.Child("cluster").String()) out.cluster = *v;
      for (const char* key : {"provider", "zone", "region"}) {
        if (auto v = placed.Child(key).String()) out.selector[key] = *v;
      }
    }
  } else if (node["queued"].IsDefined()) {
    out.outcome = model::ExpectedOutcome::kQueued;
    YamlField queued = f.Child("queued");
    if (queued.ExpectObject({"reason"})) {
      if (auto v = queued.Child("reason").String()) out.reason = *v;
    }
  } else {
    out.outcome = model::ExpectedOutcome::kRejected;
    YamlField rejected = f.Child("rejected");
    if (rejected.ExpectObject({"rule", "reason"})) {
      if (auto v = rejected.Child("rule").String()) out.rule = *v;
      if (auto v = rejected.Child("reason").String()) out.reason = *v;
    }
  }
}

}  // namespace

void DecodePolicyTestSpec(const YamlField& spec, model::PolicyTest& out) {
  if (!spec.ExpectObject({"cases"}, Required::kYes)) return;
  for (const YamlField& case_field : spec.Child("cases").Elements(Required::kYes)) {
    model::PolicyTestCase c;
    c.location = case_field.location();
    if (case_field.ExpectObject({"name", "clusters", "tenants", "now", "workload", "expect", "reasons"})) {
      if (auto v = case_field.Child("name").String(Required::kYes)) c.name = *v;
      auto names = [&](const char* key, ReferenceKind kind, std::vector<std::string>& dest) {
        YamlField list = case_field.Child(key);
        if (auto v = list.StringList()) {
          dest = *v;
          std::vector<YamlField> elements = list.Elements();
          for (size_t i = 0; i < v->size(); ++i) elements[i].NoteReference(kind, (*v)[i]);
        }
      };
      names("clusters", ReferenceKind::kCluster, c.clusters);
      names("tenants", ReferenceKind::kTenant, c.tenants);
      if (auto v = case_field.Child("now").DurationValue()) c.now = *v;
      YamlField workload = case_field.Child("workload");
      c.workload.metadata.name = "test-workload";
      c.workload.metadata.location = workload.location();
      if (workload.defined()) {
        DecodeWorkloadSpec(workload, /*partial=*/true, c.workload);
      } else {
        c.workload.resources.gpus = 1;
      }
      DecodeExpectation(case_field.Child("expect"), c.expect);
      if (auto v = case_field.Child("reasons").StringList()) c.reasons = *v;
    }
    out.cases.push_back(std::move(c));
  }
}

}  // namespace gpufed::config
