#include "controller/cli/field_reference.h"

#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpufed::cli {
namespace {

using nlohmann::json;

// Definitions of common.schema.json that read as a type of their own: a field of one of
// them is a leaf, typed by the definition's name, instead of the definition's insides.
const std::set<std::string, std::less<>> kNamedTypes = {
    "apiVersion", "kind",     "name",     "stringMap", "labels",  "annotations", "quantityString",
    "quantity",   "duration", "currency", "money",     "decimal", "stringList",  "nameList"};

// Far deeper than any schema nests; bounds a walk through references that loop.
constexpr int kMaxDepth = 24;

struct Row {
  std::string path, type, required, description, values;
};

class Walker {
 public:
  explicit Walker(const std::map<std::string, json>& schemas) : schemas_(schemas) {}

  Status Walk(const std::string& file, const json& node, const std::string& path, bool required,
              const std::string& qualifier, int depth) {
    if (depth > kMaxDepth)
      return InvalidArgument(file + ": " + path + ": nested deeper than " + std::to_string(kMaxDepth));
    if (!node.is_object()) return Status::Ok();  // `true`: anything goes, nothing to describe
    Resolved r;
    GPUFED_RETURN_IF_ERROR(Resolve(file, node, r));
    Row row;
    row.path = "`" + path + "`" + (qualifier.empty() ? "" : " (" + qualifier + ")");
    row.required = required ? "yes" : "";
    const json& described = node.contains("description") ? node : *r.node;
    row.description = described.contains("description") && described["description"].is_string()
                          ? Text(described["description"].get<std::string>())
                          : "";
    row.type = r.named.empty() ? TypeOf(r.file, *r.node) : r.named;
    row.values = Values(*r.node);
    if (!path.empty()) rows_.push_back(row);
    if (!r.named.empty()) return Status::Ok();
    return Descend(r.file, *r.node, path, qualifier, depth);
  }

  const std::vector<Row>& rows() const { return rows_; }

 private:
  struct Resolved {
    std::string file;
    const json* node = nullptr;
    std::string named;  // a common type's name, when the reference is to one
  };

  Status Resolve(const std::string& file, const json& node, Resolved& out) const {
    out.file = file;
    out.node = &node;
    for (int hops = 0; out.node->is_object() && out.node->contains("$ref"); ++hops) {
      if (hops > kMaxDepth) return InvalidArgument(file + ": a $ref chain loops");
      const json& ref_value = (*out.node)["$ref"];
      if (!ref_value.is_string()) return InvalidArgument(out.file + ": a $ref that is not a string");
      const std::string ref = ref_value.get<std::string>();
      const size_t hash = ref.find('#');
      const std::string target_file = hash == 0 ? out.file : ref.substr(0, hash);
      const std::string pointer = hash == std::string::npos ? "" : ref.substr(hash + 1);
      auto schema = schemas_.find(target_file);
      const auto bad_ref = [&](std::string_view why) {
        std::string message = file;
        message.append(": $ref ").append(ref).append(": ").append(why);
        return InvalidArgument(message);
      };
      if (schema == schemas_.end()) return bad_ref("no schema file " + target_file);
      if (target_file == "common.schema.json" && pointer.starts_with("/$defs/") &&
          kNamedTypes.count(pointer.substr(7)) != 0) {
        out.named = pointer.substr(7);
        return Status::Ok();
      }
      if (!pointer.empty() && pointer[0] != '/') return bad_ref("not a JSON pointer");
      const json::json_pointer ptr(pointer);
      if (!schema->second.contains(ptr)) return bad_ref("not found");
      out.file = target_file;
      out.node = &schema->second.at(ptr);
    }
    return Status::Ok();
  }

  Status Descend(const std::string& file, const json& node, const std::string& path, const std::string& qualifier,
                 int depth) {
    if (!node.is_object()) return Status::Ok();
    const std::string prefix = path.empty() ? "" : path + ".";
    if (auto props = node.find("properties"); props != node.end() && props->is_object()) {
      std::set<std::string> required;
      if (auto req = node.find("required"); req != node.end() && req->is_array()) {
        for (const json& name : *req) {
          if (name.is_string()) required.insert(name.get<std::string>());
        }
      }
      for (const auto& [key, child] : props->items()) {
        GPUFED_RETURN_IF_ERROR(Walk(file, child, prefix + key, required.count(key) != 0, qualifier, depth + 1));
      }
    }
    if (auto items = node.find("items"); items != node.end() && items->is_object()) {
      Resolved r;
      GPUFED_RETURN_IF_ERROR(Resolve(file, *items, r));
      if (r.named.empty()) GPUFED_RETURN_IF_ERROR(Descend(r.file, *r.node, path + "[]", qualifier, depth + 1));
    }
    // One block per variant chosen by a field's value (spec.connector by its type).
    if (auto all = node.find("allOf"); all != node.end() && all->is_array()) {
      for (const json& branch : *all) {
        if (!branch.is_object() || !branch.contains("then")) continue;
        GPUFED_RETURN_IF_ERROR(Descend(file, Then(file, branch), path, Condition(branch), depth + 1));
      }
    }
    return Status::Ok();
  }

  // The `then` of an if/then branch, its reference followed (empty when it has none).
  const json& Then(const std::string& file, const json& branch) {
    Resolved r;
    if (!Resolve(file, branch["then"], r).ok() || !r.named.empty()) return empty_;
    return *r.node;
  }

  // "type: slurm" from `if: {properties: {type: {const: slurm}}}`.
  static std::string Condition(const json& branch) {
    const json* props = branch.contains("if") ? &branch["if"] : nullptr;
    if (props == nullptr || !props->contains("properties")) return "";
    for (const auto& [key, cond] : (*props)["properties"].items()) {
      if (cond.is_object() && cond.contains("const")) return key + ": " + Scalar(cond["const"]);
    }
    return "";
  }

  std::string TypeOf(const std::string& file, const json& node) const {
    if (!node.is_object()) return "";
    if (node.contains("const")) return "constant";
    for (const char* alternatives : {"oneOf", "anyOf"}) {
      if (auto alt = node.find(alternatives); alt != node.end() && alt->is_array()) {
        std::string out;
        for (const json& a : *alt) {
          Resolved r;
          if (!Resolve(file, a, r).ok()) continue;
          const std::string t = r.named.empty() ? TypeOf(r.file, *r.node) : r.named;
          if (!t.empty() && out.find(t) == std::string::npos) out += (out.empty() ? "" : " or ") + t;
        }
        return out;
      }
    }
    const std::string type = node.contains("type") && node["type"].is_string() ? node["type"].get<std::string>() : "";
    if (type == "array" && node.contains("items")) {
      Resolved r;
      if (!Resolve(file, node["items"], r).ok()) return "list";
      return "list of " + (r.named.empty() ? TypeOf(r.file, *r.node) : r.named);
    }
    if (type == "object" && !node.contains("properties") && node.contains("additionalProperties") &&
        node["additionalProperties"].is_object()) {
      Resolved r;
      if (!Resolve(file, node["additionalProperties"], r).ok()) return "map";
      return "map of " + (r.named.empty() ? TypeOf(r.file, *r.node) : r.named);
    }
    return type.empty() && node.contains("properties") ? "object" : type;
  }

  static std::string Scalar(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

  static std::string Values(const json& node) {
    if (!node.is_object()) return "";
    std::string out;
    if (node.contains("const")) return "`" + Scalar(node["const"]) + "`";
    if (auto e = node.find("enum"); e != node.end() && e->is_array()) {
      for (const json& v : *e) out += (out.empty() ? "`" : ", `") + Scalar(v) + "`";
      return out;
    }
    auto bound = [&](const char* key, const char* word) {
      if (auto b = node.find(key); b != node.end() && b->is_number()) {
        out += (out.empty() ? "" : ", ") + std::string(word) + " " + b->dump();
      }
    };
    bound("minimum", "at least");
    bound("exclusiveMinimum", "above");
    bound("maximum", "at most");
    bound("exclusiveMaximum", "below");
    bound("minItems", "at least");
    bound("maxItems", "at most");
    if (node.contains("minItems") || node.contains("maxItems")) out += " items";
    return out;
  }

  // One table cell: no line breaks, and a `|` that does not end the cell.
  static std::string Text(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
      if (c == '\n' || c == '\r') {
        out += ' ';
      } else if (c == '|') {
        out += "\\|";
      } else {
        out += c;
      }
    }
    return out;
  }

  const std::map<std::string, json>& schemas_;
  std::vector<Row> rows_;
  json empty_ = json::object();
};

}  // namespace

Result<std::string> FieldReference(const std::map<std::string, std::string_view>& files) {
  std::map<std::string, json> schemas;
  for (const auto& [name, text] : files) {
    json parsed = json::parse(text, nullptr, false);
    if (!parsed.is_object()) return InvalidArgument(name + ": not a JSON object");
    schemas[name] = std::move(parsed);
  }
  auto root = schemas.find("gpufed.schema.json");
  if (root == schemas.end()) return InvalidArgument("no gpufed.schema.json");
  std::ostringstream out;
  out << "# Field reference\n\nEvery field of every resource kind, generated from the JSON Schemas in `schemas/` "
         "(`gpufed docs fields`). A path's `[]` is each element of a list; a qualifier in parentheses names the "
         "variant the field belongs to. `gpufed validate` applies the same rules, plus the references between "
         "documents.\n";
  const json branches = root->second.value("allOf", json::array());
  for (const json& branch : branches) {
    if (!branch.is_object() || !branch.contains("then") || !branch.contains("if")) continue;
    const json& kind = branch["if"].value("properties", json::object()).value("kind", json::object());
    const std::string ref = branch["then"].value("$ref", "");
    auto schema = schemas.find(ref);
    if (!kind.contains("const") || schema == schemas.end()) {
      return InvalidArgument("gpufed.schema.json: a kind branch without a const kind or a known $ref (" + ref + ")");
    }
    Walker walker(schemas);
    GPUFED_RETURN_IF_ERROR(walker.Walk(ref, schema->second, "", false, "", 0));
    out << "\n## " << kind["const"].get<std::string>() << "\n\n`" << ref << "`";
    if (schema->second.contains("description")) out << ": " << schema->second["description"].get<std::string>();
    out << "\n\n| field | type | required | meaning | values |\n| --- | --- | --- | --- | --- |\n";
    for (const Row& row : walker.rows()) {
      out << "| " << row.path << " | " << row.type << " | " << row.required << " | " << row.description << " | "
          << row.values << " |\n";
    }
  }
  return out.str();
}

}  // namespace gpufed::cli
