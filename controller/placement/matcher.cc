#include "controller/placement/matcher.h"

#include <optional>

#include "controller/common/quantity.h"
#include "controller/model/views.h"

namespace gpufed::placement {
namespace {

std::optional<double> AsNumber(const nlohmann::json& value) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    Result<Quantity> q = Quantity::Parse(value.get<std::string>());
    if (q.ok()) return q->units();
  }
  return std::nullopt;
}

// Equality that lets 80 equal "80" and true equal "true": YAML authors quote freely.
bool ScalarEquals(const nlohmann::json& a, const nlohmann::json& b) {
  if (a == b) return true;
  if (a.is_number() || b.is_number()) {
    std::optional<double> x = AsNumber(a), y = AsNumber(b);
    return x && y && *x == *y;
  }
  if (a.is_boolean() && b.is_string()) return (a.get<bool>() ? "true" : "false") == b.get<std::string>();
  if (b.is_boolean() && a.is_string()) return ScalarEquals(b, a);
  return false;
}

bool AnyEquals(const nlohmann::json& list, const nlohmann::json& value) {
  for (const nlohmann::json& item : list) {
    if (ScalarEquals(item, value)) return true;
  }
  return false;
}

// A view value is either a scalar or a list of scalars; "in" on a list means "all of
// the list's members are allowed" (e.g. data.residency: {in: [eu]}).
bool InList(const nlohmann::json& value, const nlohmann::json& allowed) {
  if (value.is_array()) {
    for (const nlohmann::json& v : value) {
      if (!AnyEquals(allowed, v)) return false;
    }
    return true;
  }
  return AnyEquals(allowed, value);
}

}  // namespace

bool ConditionHolds(const model::Condition& c, const nlohmann::json& view) {
  const nlohmann::json* value = model::ResolvePath(view, c.segments);
  bool present = value != nullptr && !value->is_null() && !(value->is_string() && value->get<std::string>().empty());
  switch (c.op) {
    case model::MatchOp::kExists: return present == c.operand.get<bool>();
    case model::MatchOp::kNotIn: return !present || !InList(*value, c.operand) || (value->is_array() && value->empty());
    default: break;
  }
  if (value == nullptr) return false;
  switch (c.op) {
    case model::MatchOp::kEquals:
      if (value->is_array()) return AnyEquals(*value, c.operand);
      return ScalarEquals(*value, c.operand);
    case model::MatchOp::kIn: return present && InList(*value, c.operand);
    case model::MatchOp::kContains: return value->is_array() && AnyEquals(*value, c.operand);
    case model::MatchOp::kContainsAll:
      if (!value->is_array()) return false;
      for (const nlohmann::json& needed : c.operand) {
        if (!AnyEquals(*value, needed)) return false;
      }
      return true;
    case model::MatchOp::kGte:
    case model::MatchOp::kGt:
    case model::MatchOp::kLte:
    case model::MatchOp::kLt: {
      std::optional<double> x = AsNumber(*value), y = AsNumber(c.operand);
      if (!x || !y) return false;
      if (c.op == model::MatchOp::kGte) return *x >= *y;
      if (c.op == model::MatchOp::kGt) return *x > *y;
      if (c.op == model::MatchOp::kLte) return *x <= *y;
      return *x < *y;
    }
    default: return false;
  }
}

bool AllConditionsHold(const std::vector<model::Condition>& conditions, const nlohmann::json& view, bool node_level) {
  for (const model::Condition& c : conditions) {
    if (c.on_node == node_level && !ConditionHolds(c, view)) return false;
  }
  return true;
}

std::string DescribeFailure(const model::Condition& c, const nlohmann::json& view) {
  const nlohmann::json* value = model::ResolvePath(view, c.segments);
  std::string wanted = c.op == model::MatchOp::kEquals ? "= " + c.operand.dump()
                                                       : std::string(model::MatchOpName(c.op)) + " " + c.operand.dump();
  std::string actual = value == nullptr ? "absent" : value->dump();
  return "requires " + c.path + " " + wanted + ", is " + actual;
}

}  // namespace gpufed::placement
