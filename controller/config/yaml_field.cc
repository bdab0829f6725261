#include "controller/config/yaml_field.h"

#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <unordered_set>
#include <vector>

#include "controller/common/text.h"

namespace gpufed::config {
namespace {

bool IsPlain(const YamlNode& node) { return node.Tag() == "?" || node.Tag().empty(); }

bool MatchesInt(const std::string& s) {
  static const std::regex kInt(R"([-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)");
  return std::regex_match(s, kInt);
}

bool MatchesFloat(const std::string& s) {
  static const std::regex kFloat(
      R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.nan|\.NaN|\.NAN)");
  return std::regex_match(s, kFloat);
}

// Decimal notation only: the floats of the core schema without .inf and .nan.
bool MatchesDecimal(const std::string& s) {
  static const std::regex kDecimal(R"([-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?)");
  return std::regex_match(s, kDecimal);
}

const char* KindName(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::kNull: return "null";
    case ScalarKind::kBool: return "a boolean";
    case ScalarKind::kInt: return "an integer";
    case ScalarKind::kFloat: return "a number";
    case ScalarKind::kString: return "a string";
  }
  return "a value";
}

std::string Describe(const YamlNode& node) {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  return KindName(ClassifyScalar(node));
}

}  // namespace

ScalarKind ClassifyScalar(const YamlNode& node) {
  if (node.IsNull()) return ScalarKind::kNull;
  if (!IsPlain(node)) return ScalarKind::kString;
  const std::string& s = node.Scalar();
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") {
    return ScalarKind::kBool;
  }
  if (s == "null" || s == "Null" || s == "NULL" || s == "~" || s.empty()) return ScalarKind::kNull;
  if (MatchesInt(s)) return ScalarKind::kInt;
  if (MatchesFloat(s)) return ScalarKind::kFloat;
  return ScalarKind::kString;
}

std::optional<int64_t> ParseYamlInt(std::string_view text) {
  if (!MatchesInt(std::string(text))) return std::nullopt;
  int base = 10;
  bool negative = false;
  if (text.starts_with("0x") || text.starts_with("0o")) {
    base = text[1] == 'x' ? 16 : 8;
    text.remove_prefix(2);
  } else if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  // The magnitude in 64 unsigned bits, then the sign: "-9223372036854775808" fits,
  // "9223372036854775808" does not.
  uint64_t magnitude = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), magnitude, base);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  constexpr uint64_t kMax = INT64_MAX;
  if (magnitude > kMax + (negative ? 1 : 0)) return std::nullopt;
  if (negative) return magnitude == kMax + 1 ? INT64_MIN : -static_cast<int64_t>(magnitude);
  return static_cast<int64_t>(magnitude);
}

std::optional<double> ParseYamlFloat(std::string_view text) {
  const std::string s(text);
  if (!MatchesDecimal(s)) return std::nullopt;
  errno = 0;
  const double value = std::strtod(s.c_str(), nullptr);
  // ERANGE: beyond double's range, or below its normal range (read as 0 or subnormal).
  if (errno == ERANGE || !std::isfinite(value)) return std::nullopt;
  if (value != 0 && std::fabs(value) < DBL_MIN) return std::nullopt;
  return value;
}

bool IsValidName(std::string_view name) {
  static const std::regex kName(R"([a-z0-9]([-a-z0-9.]*[a-z0-9])?)");
  return !name.empty() && name.size() <= 63 && std::regex_match(name.begin(), name.end(), kName);
}

YamlField::YamlField(const YamlNode& node, std::string path, const DocumentContext* context, YamlMark mark)
    : node_(&node), path_(std::move(path)), context_(context), mark_(mark) {
  if (node_->Mark().IsKnown()) mark_ = node_->Mark();
}

YamlField YamlField::Root(const YamlNode& node, const DocumentContext* context) {
  return YamlField(node, "", context, node.Mark());
}

model::SourceLocation YamlField::location() const {
  return {context_->file, context_->line_offset + mark_.line + 1, mark_.column + 1};
}

void YamlField::Error(const std::string& message) const {
  model::SourceLocation at = location();
  context_->diagnostics->Add({at.file, at.line, at.column, path_, message});
}

void YamlField::NoteReference(ReferenceKind kind, const std::string& name, bool rule_value) const {
  if (context_->references != nullptr) context_->references->push_back({kind, name, path_, location(), rule_value});
}

YamlField YamlField::Child(std::string_view key) const {
  std::string child_path = path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  // A missing key reads as null, which is absent, at this node's position.
  const YamlNode* child = node_->IsMap() ? node_->Find(key) : nullptr;
  return YamlField(child != nullptr ? *child : YamlNode::Missing(), child_path, context_, mark_);
}

std::vector<YamlField> YamlField::Elements(Required required) const {
  std::vector<YamlField> out;
  if (!CheckPresent(required)) return out;
  if (!node_->IsSequence()) {
    Error("expected a list, got " + Describe(*node_));
    return out;
  }
  const std::span<const YamlNode* const> elements = node_->elements();
  out.reserve(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    out.emplace_back(*elements[i], path_ + "[" + std::to_string(i) + "]", context_, mark_);
  }
  return out;
}

std::vector<std::pair<std::string, YamlField>> YamlField::Entries() const {
  std::vector<std::pair<std::string, YamlField>> out;
  if (!node_->IsMap()) return out;
  out.reserve(node_->size());
  for (const YamlNode::Entry& entry : node_->entries()) {
    std::string key = entry.key->IsScalar() ? entry.key->Scalar() : "?";
    std::string child_path = path_.empty() ? key : path_ + "." + key;
    out.emplace_back(key, YamlField(*entry.value, child_path, context_, entry.key->Mark()));
  }
  return out;
}

bool YamlField::ExpectObject(std::initializer_list<std::string_view> allowed, Required required) const {
  return ExpectObject(std::span<const std::string_view>(allowed.begin(), allowed.size()), required);
}

bool YamlField::ExpectObject(std::span<const std::string_view> allowed, Required required) const {
  if (!CheckPresent(required)) return false;
  if (!node_->IsMap()) {
    Error("expected a mapping, got " + Describe(*node_));
    return false;
  }
  std::vector<std::string_view> names(allowed.begin(), allowed.end());
  std::unordered_set<std::string_view> seen;
  seen.reserve(node_->size());
  for (const YamlNode::Entry& entry : node_->entries()) {
    if (!entry.key->IsScalar()) {
      YamlField(*entry.key, path_, context_, entry.key->Mark()).Error("keys must be plain strings");
      continue;
    }
    const std::string& key = entry.key->Scalar();
    std::string key_path = path_.empty() ? key : path_ + "." + key;
    YamlField key_field(*entry.key, key_path, context_, entry.key->Mark());
    if (!seen.insert(key).second) {
      key_field.Error("duplicate key '" + key + "'");
      continue;
    }
    bool known = false;
    for (std::string_view name : names) known = known || name == key;
    if (!known) {
      std::string suggestion = ClosestMatch(key, names);
      key_field.Error("unknown field '" + key + "'" +
                      (suggestion.empty() ? "" : " (did you mean '" + suggestion + "'?)"));
    }
  }
  return true;
}

bool YamlField::CheckPresent(Required required) const {
  if (defined()) return true;
  if (required == Required::kYes) Error("missing required field");
  return false;
}

bool YamlField::CheckScalar(const char* expected) const {
  if (node_->IsScalar()) return true;
  Error(std::string("expected ") + expected + ", got " + Describe(*node_));
  return false;
}

std::optional<std::string> YamlField::String(Required required) const {
  if (!CheckPresent(required) || !CheckScalar("a string")) return std::nullopt;
  ScalarKind kind = ClassifyScalar(*node_);
  if (kind != ScalarKind::kString) {
    Error(std::string("expected a string, got ") + KindName(kind) + " (quote it: \"" + node_->Scalar() + "\")");
    return std::nullopt;
  }
  return node_->Scalar();
}

std::optional<int64_t> YamlField::Int(int64_t min, int64_t max, Required required) const {
  if (!CheckPresent(required) || !CheckScalar("an integer")) return std::nullopt;
  if (ClassifyScalar(*node_) != ScalarKind::kInt) {
    Error("expected an integer, got " + Describe(*node_) + " '" + node_->Scalar() + "'");
    return std::nullopt;
  }
  const std::string& s = node_->Scalar();
  const std::optional<int64_t> value = ParseYamlInt(s);
  if (!value || *value < min || *value > max) {
    Error("value " + s + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return std::nullopt;
  }
  return value;
}

std::optional<double> YamlField::Number(double min, double max, Required required) const {
  if (!CheckPresent(required) || !CheckScalar("a number")) return std::nullopt;
  const ScalarKind kind = ClassifyScalar(*node_);
  if (kind != ScalarKind::kInt && kind != ScalarKind::kFloat) {
    Error("expected a number, got " + Describe(*node_) + " '" + node_->Scalar() + "'");
    return std::nullopt;
  }
  const std::string& s = node_->Scalar();
  std::optional<double> value;
  if (kind == ScalarKind::kInt) {
    if (const std::optional<int64_t> i = ParseYamlInt(s)) value = static_cast<double>(*i);
  } else {
    value = ParseYamlFloat(s);
  }
  if (!value) {
    // Which way it failed: a decimal too close to zero, or a number beyond int64 or
    // double (or .inf, .nan).
    const bool tiny =
        kind == ScalarKind::kFloat && MatchesDecimal(s) && std::fabs(std::strtod(s.c_str(), nullptr)) < DBL_MIN;
    Error("value " + s + (tiny ? " is too small to represent (it would read as 0)" : " is out of range"));
    return std::nullopt;
  }
  if (*value < min || *value > max) {
    Error("value " + s + " is out of range");
    return std::nullopt;
  }
  return value;
}

std::optional<bool> YamlField::Bool(Required required) const {
  if (!CheckPresent(required) || !CheckScalar("a boolean")) return std::nullopt;
  if (ClassifyScalar(*node_) != ScalarKind::kBool) {
    Error("expected true or false, got " + Describe(*node_) + " '" + node_->Scalar() + "'");
    return std::nullopt;
  }
  char first = node_->Scalar()[0];
  return first == 't' || first == 'T';
}

std::optional<Quantity> YamlField::QuantityValue(Quantity min, Quantity max, Required required) const {
  if (!CheckPresent(required) || !CheckScalar("a quantity")) return std::nullopt;
  ScalarKind kind = ClassifyScalar(*node_);
  if (kind != ScalarKind::kString && kind != ScalarKind::kInt && kind != ScalarKind::kFloat) {
    Error("expected a quantity such as 80Gi or 500m, got " + Describe(*node_));
    return std::nullopt;
  }
  Result<Quantity> q = Quantity::Parse(node_->Scalar());
  if (!q.ok()) {
    Error(q.status().message());
    return std::nullopt;
  }
  if (*q < min || *q > max) {
    Error("quantity " + node_->Scalar() + " is out of range [" + min.ToString() + ", " + max.ToString() + "]");
    return std::nullopt;
  }
  return *q;
}

std::optional<Duration> YamlField::DurationValue(Required required) const {
  if (!CheckPresent(required) || !CheckScalar("a duration")) return std::nullopt;
  Result<Duration> d = Duration::Parse(node_->Scalar());
  if (!d.ok()) {
    Error(d.status().message());
    return std::nullopt;
  }
  return *d;
}

std::optional<Money> YamlField::MoneyValue(std::string_view default_currency, Required required) const {
  if (!CheckPresent(required) || !CheckScalar("an amount")) return std::nullopt;
  ScalarKind kind = ClassifyScalar(*node_);
  if (kind != ScalarKind::kString && kind != ScalarKind::kInt && kind != ScalarKind::kFloat) {
    Error("expected an amount such as \"400.00 EUR\", got " + Describe(*node_));
    return std::nullopt;
  }
  Result<Money> m = Money::Parse(node_->Scalar(), default_currency);
  if (!m.ok()) {
    Error(m.status().message());
    return std::nullopt;
  }
  if (m->micros() < 0) {
    Error("amount must not be negative");
    return std::nullopt;
  }
  return *m;
}

std::optional<Money> YamlField::MoneyWithCurrency(Required required) const {
  std::optional<Money> m = MoneyValue("", required);
  if (m && m->currency().empty()) {
    const size_t dot = path_.rfind('.');
    Error((dot == std::string::npos ? path_ : path_.substr(dot + 1)) + " needs a currency, e.g. \"400.00 EUR\"");
    return std::nullopt;
  }
  return m;
}

std::optional<std::string> YamlField::Enum(std::initializer_list<std::string_view> names, Required required) const {
  return Enum(std::span<const std::string_view>(names.begin(), names.size()), required);
}

std::optional<std::string> YamlField::Enum(std::span<const std::string_view> names, Required required) const {
  std::optional<std::string> value = String(required);
  if (!value) return std::nullopt;
  std::vector<std::string_view> candidates(names.begin(), names.end());
  for (std::string_view name : candidates) {
    if (name == *value) return value;
  }
  std::vector<std::string> quoted;
  quoted.reserve(candidates.size());
  for (std::string_view name : candidates) quoted.emplace_back(name);
  std::string suggestion = ClosestMatch(*value, candidates);
  Error("invalid value '" + *value + "' (allowed: " + Join(quoted, ", ") + ")" +
        (suggestion.empty() ? "" : "; did you mean '" + suggestion + "'?"));
  return std::nullopt;
}

std::optional<std::vector<std::string>> YamlField::StringList(Required required) const {
  if (!CheckPresent(required)) return std::nullopt;
  if (!node_->IsSequence()) {
    Error("expected a list of strings, got " + Describe(*node_));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (const YamlField& element : Elements()) {
    std::optional<std::string> s = element.String(Required::kYes);
    if (s) out.push_back(*s);
    ok = ok && s.has_value();
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::map<std::string, std::string>> YamlField::StringMap(Required required) const {
  if (!CheckPresent(required)) return std::nullopt;
  if (!node_->IsMap()) {
    Error("expected a mapping of strings, got " + Describe(*node_));
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  bool ok = true;
  for (const auto& [key, value] : Entries()) {
    std::optional<std::string> s = value.String(Required::kYes);
    if (s) out[key] = *s;
    ok = ok && s.has_value();
  }
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace gpufed::config
