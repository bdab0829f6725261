#pragma once
// A Policy: declarative rules (when workload matches, require of the cluster),
// scoring weights, burst thresholds, priority classes and Lua hook files.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/duration.h"
#include "controller/model/meta.h"
#include "controller/model/policy_params.h"

namespace gpufed::model {

enum class Enforcement { kDeny, kWarn, kDryRun };
const char* EnforcementName(Enforcement enforcement);

enum class MatchOp { kEquals, kIn, kNotIn, kExists, kGte, kGt, kLte, kLt, kContains, kContainsAll };
const char* MatchOpName(MatchOp op);

// One `path: matcher` entry. `operand` is a JSON scalar, or an array for in/notIn/
// containsAll, or a bool for exists. Numeric comparisons accept quantity strings.
struct Condition {
  std::string path;                  // as written, e.g. "data.sensitivity"
  std::vector<std::string> segments; // path split on '.', without "workload."/"cluster." prefix
  bool on_node = false;              // require paths starting with "node."
  MatchOp op = MatchOp::kEquals;
  nlohmann::json operand;
  SourceLocation location;
};

struct Rule {
  std::string name;
  std::string description;
  std::vector<Condition> when;       // all must hold for the rule to apply; empty = always
  std::vector<Condition> require;    // all must hold of the cluster (or node pool)
  SourceLocation location;
};

struct ScoringWeights {
  double cost = 1;
  double locality = 1;
  double fragmentation = 1;
  double onprem = 1;
  double lua = 1;  // this policy's own Lua score weight
};

struct BurstThresholds {
  std::optional<Duration> queue_wait;
  std::optional<int> queue_depth;
};

struct Policy {
  ObjectMeta metadata;
  Enforcement enforcement = Enforcement::kDeny;
  std::vector<Rule> rules;
  std::optional<ScoringWeights> weights;
  BurstThresholds burst;
  std::map<std::string, int> priority_classes;
  std::vector<std::string> lua_files;  // paths relative to the repository root, or stdlib/...
  std::string import;                  // a standard-library policy merged in, e.g. "stdlib/burst"
  nlohmann::json params = nlohmann::json::object();  // handed to the Lua hooks as their last argument
  // The params its hooks read, declared (spec.parameters; an import's, when it declares
  // none): validate checks `params` against them.
  std::vector<ParamSpec> parameters;
  std::map<std::string, SourceLocation> param_locations;  // where each member of params was written, by JSON pointer
  bool enforcement_set = false;        // written explicitly (an import must not override it)
  // At run time, a pass in which more than this share of the policy's hook calls fail is
  // reported (policy-degraded journal record and metric). Failing deny hooks still deny.
  double error_budget = 0.01;
};

}  // namespace gpufed::model
