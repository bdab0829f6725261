#pragma once
// One decoder per resource kind: a document's `spec` (already known to be a mapping
// or reported) into the model. Decoders report every problem through the field's
// diagnostics and always return an object, filled as far as the input allows.
#include <optional>
#include <string>

#include "controller/config/yaml_field.h"
#include "controller/model/audit_sink.h"
#include "controller/model/cluster.h"
#include "controller/model/config.h"
#include "controller/model/exchange_rates.h"
#include "controller/model/limits.h"
#include "controller/model/policy.h"
#include "controller/model/policy_test.h"
#include "controller/model/tenant.h"
#include "controller/model/workload.h"

namespace gpufed::config {

// A YAML scalar as JSON, typed by the YAML 1.2 core schema. A number no int64 or finite
// double holds exactly enough (99999999999999999999, 1e400, 1e-400, .inf, .nan: JSON has
// no infinities and a rule must not compare with a silent 0) is reported on `f`: nullopt.
std::optional<nlohmann::json> ScalarToJson(const YamlField& f);
// Any YAML value as JSON (Policy params, a connector block's provider fields): mappings
// as objects, sequences as arrays, scalars as ScalarToJson types them.
std::optional<nlohmann::json> ToJson(const YamlField& f);

// Bounds that make absurd input an error rather than a silent overflow later.
using model::kMaxGpusPerNode;
inline constexpr int64_t kMaxNodesPerPool = 100000;
inline const Quantity kMaxNodeMemory = Quantity::FromUnits(int64_t{64} << 40);  // 64Ti
inline const Quantity kMaxGpuMemory = Quantity::FromUnits(int64_t{1} << 40);    // 1Ti
inline const Quantity kMaxCpu = Quantity::FromUnits(100000);
inline const Quantity kMaxDatasetSize = Quantity::FromUnits(int64_t{1} << 50);  // 1Pi

void DecodeClusterSpec(const YamlField& spec, model::Cluster& out);

// `partial` allows omitting tenant and resources (PolicyTest cases fill defaults).
void DecodeWorkloadSpec(const YamlField& spec, bool partial, model::Workload& out);

// A priority as written (Workload.spec.priority, Tenant.spec.maxPriority): a number, or
// a priority class name, noted as a reference and resolved after loading. Both empty
// when the field is absent or wrong (the error is reported on `f`).
struct WrittenPriority {
  std::optional<int> number;
  std::string class_name;
};
WrittenPriority DecodePriority(const YamlField& f);

void DecodeTenantSpec(const YamlField& spec, model::Tenant& out);
void DecodeExchangeRatesSpec(const YamlField& spec, model::ExchangeRates& out);
// After loading: at most one ExchangeRates, and a rate for every pair of currencies the
// repository's prices, budgets and maxCosts mix (reported at one place, naming the other).
// With `context` (a submission checked against its repository), its places and rates
// count too, and only the submission's places are reported.
void CheckCurrencies(const model::Config& config, const model::Config* context, Diagnostics& diagnostics);
void DecodeAuditSinkSpec(const YamlField& spec, model::AuditSink& out);
void DecodeAuditWitnessSpec(const YamlField& spec, model::AuditWitness& out);
void DecodePolicySpec(const YamlField& spec, model::Policy& out);
// One rule of a Policy: its `when` and `require` conditions, checked against the view
// tables (model/view_fields.h).
void DecodeRule(const YamlField& f, model::Rule& out);
void DecodePolicyTestSpec(const YamlField& spec, model::PolicyTest& out);

}  // namespace gpufed::config
