#include "controller/config/decoders.h"

#include <cstdlib>

#include "controller/config/param_check.h"

namespace gpufed::config {

std::optional<nlohmann::json> ToJson(const YamlField& f) {
  const YamlNode& node = f.node();
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
  if (node.IsScalar()) return ScalarToJson(f);
  return nlohmann::json(nullptr);
}

void DecodePolicySpec(const YamlField& spec, model::Policy& out) {
  if (!spec.ExpectObject({"enforcement", "rules", "scoring", "burst", "priorityClasses", "lua", "import", "params",
                          "parameters", "errorBudget"},
                         Required::kYes)) {
    return;
  }
  // errorBudget: "1%" or a fraction (0.01).
  YamlField budget = spec.Child("errorBudget");
  if (budget.defined()) {
    const std::optional<std::string> text =
        budget.node().IsScalar() ? std::optional(budget.node().Scalar()) : std::nullopt;
    if (text && !text->empty() && text->back() == '%') {
      const std::optional<double> percent = ParseYamlFloat(std::string_view(*text).substr(0, text->size() - 1));
      if (!percent || !(*percent >= 0 && *percent <= 100)) {
        budget.Error("expected a percentage from 0% to 100% (e.g. 1%), or a fraction from 0 to 1");
      } else {
        out.error_budget = *percent / 100;
      }
    } else if (auto v = budget.Number(0, 1)) {
      out.error_budget = *v;
    }
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
      RecordParamLocations(params, "", out.param_locations);
    }
  }
  DecodeParameters(spec.Child("parameters"), out.parameters);
  if (auto v = spec.Child("enforcement").Enum({"deny", "warn", "dryrun"})) {
    out.enforcement_set = true;
    out.enforcement = *v == "deny"   ? model::Enforcement::kDeny
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

}  // namespace gpufed::config
