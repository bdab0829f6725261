#pragma once
// Label and field selectors as the API server parses them (list ?labelSelector=,
// ?fieldSelector=). Label selectors: "k", "!k", "k=v", "k==v", "k!=v", "k in (a,b)",
// "k notin (a,b)", comma-separated (AND). Field selectors: "f=v", "f==v", "f!=v".
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpufed::testing {

struct Requirement {
  std::string key;
  std::string op;                  // "exists", "!exists", "=", "!=", "in", "notin"
  std::vector<std::string> values;
};

class Selector {
 public:
  // nullopt for a malformed selector (the server answers 400).
  static std::optional<Selector> ParseLabels(const std::string& text);
  static std::optional<Selector> ParseFields(const std::string& text);
  bool Matches(const std::map<std::string, std::string>& labels) const;
  const std::vector<Requirement>& requirements() const { return reqs_; }

 private:
  std::vector<Requirement> reqs_;
};

}  // namespace gpufed::testing
