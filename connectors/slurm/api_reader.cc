#include "connectors/slurm/api_reader.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <optional>

namespace gpufed::connectors::slurm {
namespace {

using nlohmann::json;

// An integer the JSON value holds exactly; nullopt for anything else (floats with a
// fraction, out-of-range unsigned values, strings).
std::optional<int64_t> AsInt(const json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9e18) return std::nullopt;
    return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

}  // namespace

const char* JsonTypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::boolean: return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: return "number";
    default: return "value";
  }
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Status ReplyContext::Problem(const std::string& field, const std::string& problem) const {
  return Unavailable(prefix_ + ": " + field + ": " + problem);
}

Status ReplyContext::ExpectObject(const json& reply) const {
  if (reply.is_discarded()) return Problem("reply", "not JSON");
  if (!reply.is_object()) return Problem("reply", std::string("expected a JSON object, got ") + JsonTypeName(reply));
  return Status::Ok();
}

Fields::Fields(const ReplyContext& ctx, const json& object, std::string path)
    : Fields(ctx, &object, std::move(path), std::make_shared<Status>()) {
  if (!object.is_object()) Fail("", std::string("expected an object, got ") + JsonTypeName(object));
}

void Fields::Fail(const std::string& key, const std::string& problem) {
  if (!status_->ok()) return;
  std::string where = key.empty() ? (path_.empty() ? "reply" : path_) : Where(key);
  *status_ = ctx_->Problem(where, problem);
}

bool Fields::Has(const char* key) const {
  return object_ != nullptr && object_->is_object() && object_->contains(key);
}

const json* Fields::Find(const char* key, Need need, const char* expected) {
  if (object_ == nullptr || !object_->is_object()) return nullptr;
  auto it = object_->find(key);
  if (it == object_->end()) {
    if (need == Need::kRequired) Fail(key, std::string("missing (expected ") + expected + ")");
    return nullptr;
  }
  return &*it;
}

Fields Fields::Child(const char* key, Need need) {
  const json* v = Find(key, need, "an object");
  if (v != nullptr && !v->is_object()) {
    if (need == Need::kRequired) Fail(key, std::string("expected an object, got ") + JsonTypeName(*v));
    v = nullptr;
  }
  return Fields(*ctx_, v, Where(key), status_);
}

Fields Fields::Element(const json& element, size_t index, const std::string& list_path) {
  std::string path = list_path + "[" + std::to_string(index) + "]";
  Fields out(*ctx_, &element, path, status_);
  if (!element.is_object()) out.Fail("", std::string("expected an object, got ") + JsonTypeName(element));
  return out;
}

std::string Fields::Str(const char* key, Need need) {
  const json* v = Find(key, need, "a string");
  if (v == nullptr || v->is_null()) return "";
  if (v->is_string()) return v->get<std::string>();
  if (need == Need::kRequired) Fail(key, std::string("expected a string, got ") + JsonTypeName(*v));
  return "";
}

int64_t Fields::Int(const char* key, Need need) {
  const json* v = Find(key, need, "an integer");
  if (v == nullptr) return 0;
  if (std::optional<int64_t> i = AsInt(*v)) return *i;
  if (need == Need::kRequired) Fail(key, std::string("expected an integer, got ") + JsonTypeName(*v));
  return 0;
}

int64_t Fields::Number(const char* key, Need need) {
  const json* v = Find(key, need, "a number");
  if (v == nullptr) return 0;
  if (std::optional<int64_t> i = AsInt(*v)) return *i;
  if (v->is_object()) {
    auto set = v->find("set");
    auto infinite = v->find("infinite");
    auto number = v->find("number");
    bool set_ok = set != v->end() && set->is_boolean();
    bool inf_ok = infinite == v->end() || infinite->is_boolean();
    std::optional<int64_t> n = number != v->end() ? AsInt(*number) : std::nullopt;
    if (set_ok && inf_ok && (n || !set->get<bool>())) {
      if (infinite != v->end() && infinite->get<bool>()) return 0;
      return set->get<bool>() ? *n : 0;
    }
  }
  if (need == Need::kRequired) {
    Fail(key, std::string("expected an integer or a number object {set, infinite, number}, got ") +
                  (v->is_object() ? "an object without them" : JsonTypeName(*v)));
  }
  return 0;
}

bool Fields::Bool(const char* key, Need need) {
  const json* v = Find(key, need, "a boolean");
  if (v == nullptr) return false;
  if (v->is_boolean()) return v->get<bool>();
  if (need == Need::kRequired) Fail(key, std::string("expected a boolean, got ") + JsonTypeName(*v));
  return false;
}

const json* Fields::Array(const char* key, Need need) {
  const json* v = Find(key, need, "an array");
  if (v == nullptr) return nullptr;
  if (v->is_array()) return v;
  if (need == Need::kRequired) Fail(key, std::string("expected an array, got ") + JsonTypeName(*v));
  return nullptr;
}

std::vector<std::string> Fields::Strings(const char* key, Need need) {
  std::vector<std::string> out;
  const json* list = Array(key, need);
  if (list == nullptr) return out;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& v = (*list)[i];
    if (v.is_string()) {
      out.push_back(v.get<std::string>());
    } else if (need == Need::kRequired) {
      Fail(std::string(key) + "[" + std::to_string(i) + "]", std::string("expected a string, got ") + JsonTypeName(v));
    }
  }
  return out;
}

}  // namespace gpufed::connectors::slurm
