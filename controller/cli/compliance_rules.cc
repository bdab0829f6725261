#include "controller/cli/compliance_rules.h"

#include <algorithm>

#include "controller/audit/inputs.h"

namespace gpufed::cli {
namespace {

constexpr const char* kDataSensitivity = "stdlib/data-sensitivity";
constexpr const char* kComplianceZones = "stdlib/compliance-zones";
constexpr const char* kComplianceZonesLua = "stdlib/compliance-zones.lua";

// The string elements of a params list (the loader checked the types against the
// library's declared parameters; anything else reads as absent).
std::vector<std::string> ZoneList(const nlohmann::json& list) {
  std::vector<std::string> zones;
  if (!list.is_array()) return zones;
  for (const nlohmann::json& z : list) {
    if (z.is_string()) zones.push_back(z.get<std::string>());
  }
  return zones;
}

audit::ComplianceRules::Zones ZonesOf(const model::Policy& policy) {
  audit::ComplianceRules::Zones z;
  z.policy = policy.metadata.name;
  // Without piiZones the hook fails on every PII workload, and a deny policy's failing
  // filter denies: PII may go nowhere, which is what an empty list says.
  auto pii = policy.params.find("piiZones");
  if (pii != policy.params.end()) z.pii_zones = ZoneList(*pii);
  auto by = policy.params.find("zonesBySensitivity");
  if (by != policy.params.end() && by->is_object()) {
    for (const auto& [sensitivity, zones] : by->items()) z.by_sensitivity[sensitivity] = ZoneList(zones);
  }
  return z;
}

}  // namespace

audit::ComplianceRules ComplianceRulesOf(const model::Config& config) {
  audit::ComplianceRules rules;
  rules.revision = config.revision;
  for (const model::Policy& policy : config.policies) {
    const bool deny = policy.enforcement == model::Enforcement::kDeny;
    const std::string unenforced =
        "policy " + policy.metadata.name + " has enforcement " + model::EnforcementName(policy.enforcement);
    if (policy.import == kDataSensitivity) {
      if (deny) {
        rules.restricted_onprem_policies.push_back(policy.metadata.name);
      } else {
        rules.not_enforced[kDataSensitivity].push_back(unenforced);
      }
    }
    // Imported or named directly: the hook is what enforces, with this policy's params.
    const bool zones =
        std::find(policy.lua_files.begin(), policy.lua_files.end(), kComplianceZonesLua) != policy.lua_files.end();
    if (!zones) continue;
    if (deny) {
      rules.zones.push_back(ZonesOf(policy));
    } else {
      rules.not_enforced[kComplianceZones].push_back(unenforced);
    }
  }
  return rules;
}

DecisionComplianceRules::DecisionComplianceRules(std::unique_ptr<audit::SnapshotStore> snapshots,
                                                 std::vector<std::string> moved)
    : snapshots_(std::move(snapshots)), revisions_(std::move(moved)) {}

Result<audit::ComplianceRules> DecisionComplianceRules::For(const nlohmann::json& decision) {
  auto text = [&](const char* key) {
    auto it = decision.find(key);
    return it != decision.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const std::string revision = text("revision"), digest = text("inputs");
  if (revision.empty()) return NotFound("the decision names no policy revision");
  auto known = by_revision_.find(revision);
  if (known != by_revision_.end()) return known->second;
  // The repository the snapshot recorded; a decision without one (written without the
  // pass's inputs) or with an unreadable one can still be found in a --repo folder.
  std::string repo;
  Status snapshot = Status::Ok();
  if (!digest.empty()) {
    auto bad = unreadable_snapshots_.find(digest);
    if (bad != unreadable_snapshots_.end()) {
      snapshot = bad->second;
    } else if (Result<audit::SnapshotRevision> s = audit::ReadSnapshotRevision(*snapshots_, digest); s.ok()) {
      repo = s->repo;
    } else {
      snapshot = Status(s.status().code(), "its snapshot " + digest + " cannot be read: " + s.status().message());
      unreadable_snapshots_.emplace(digest, snapshot);
    }
  }
  Result<const policy::Revision*> found = revisions_.Find(repo, revision);
  if (found.ok()) {
    return by_revision_.emplace(revision, ComplianceRulesOf((*found)->config)).first->second;
  }
  if (!snapshot.ok()) {
    // Another decision of the revision may name a snapshot that can be read.
    return Status(snapshot.code(), "revision " + revision + " is not available: " + snapshot.message());
  }
  if (digest.empty() && repo.empty()) return found.status();
  return by_revision_.emplace(revision, found.status()).first->second;
}

}  // namespace gpufed::cli
