#include "tests/fake-kube/selectors.h"

#include <cctype>

namespace gpufed::testing {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(' ');
  size_t e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Splits on commas outside parentheses.
std::vector<std::string> SplitTop(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

bool ValidKey(const std::string& k) {
  if (k.empty()) return false;
  for (char c : k) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.' && c != '/') return false;
  }
  return true;
}

}  // namespace

std::optional<Selector> Selector::ParseLabels(const std::string& text) {
  Selector s;
  if (Trim(text).empty()) return s;
  for (std::string part : SplitTop(text)) {
    part = Trim(part);
    Requirement r;
    size_t sp = part.find(' ');
    if (sp != std::string::npos && (part.find(" in ") != std::string::npos || part.find(" notin ") != std::string::npos)) {
      r.key = part.substr(0, sp);
      std::string rest = Trim(part.substr(sp));
      if (rest.rfind("in ", 0) == 0) {
        r.op = "in";
        rest = Trim(rest.substr(3));
      } else if (rest.rfind("notin ", 0) == 0) {
        r.op = "notin";
        rest = Trim(rest.substr(6));
      } else {
        return std::nullopt;
      }
      if (rest.size() < 2 || rest.front() != '(' || rest.back() != ')') return std::nullopt;
      for (const std::string& v : SplitTop(rest.substr(1, rest.size() - 2))) r.values.push_back(Trim(v));
    } else if (size_t ne = part.find("!="); ne != std::string::npos) {
      r = {Trim(part.substr(0, ne)), "!=", {Trim(part.substr(ne + 2))}};
    } else if (size_t eq = part.find('='); eq != std::string::npos) {
      size_t len = part.compare(eq, 2, "==") == 0 ? 2 : 1;
      r = {Trim(part.substr(0, eq)), "=", {Trim(part.substr(eq + len))}};
    } else if (!part.empty() && part[0] == '!') {
      r = {Trim(part.substr(1)), "!exists", {}};
    } else {
      r = {part, "exists", {}};
    }
    if (!ValidKey(r.key)) return std::nullopt;
    s.reqs_.push_back(r);
  }
  return s;
}

std::optional<Selector> Selector::ParseFields(const std::string& text) {
  Selector s;
  if (Trim(text).empty()) return s;
  for (std::string part : SplitTop(text)) {
    part = Trim(part);
    Requirement r;
    if (size_t ne = part.find("!="); ne != std::string::npos) {
      r = {part.substr(0, ne), "!=", {part.substr(ne + 2)}};
    } else if (size_t eq = part.find('='); eq != std::string::npos) {
      size_t len = part.compare(eq, 2, "==") == 0 ? 2 : 1;
      r = {part.substr(0, eq), "=", {part.substr(eq + len)}};
    } else {
      return std::nullopt;
    }
    s.reqs_.push_back(r);
  }
  return s;
}

bool Selector::Matches(const std::map<std::string, std::string>& labels) const {
  for (const Requirement& r : reqs_) {
    auto it = labels.find(r.key);
    bool has = it != labels.end();
    auto in = [&] {
      for (const std::string& v : r.values) {
        if (has && it->second == v) return true;
      }
      return false;
    };
    if (r.op == "exists" && !has) return false;
    if (r.op == "!exists" && has) return false;
    if (r.op == "=" && !in()) return false;
    if (r.op == "!=" && in()) return false;
    if (r.op == "in" && !in()) return false;
    if (r.op == "notin" && in()) return false;
  }
  return true;
}

}  // namespace gpufed::testing
