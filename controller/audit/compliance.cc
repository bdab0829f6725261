#include "controller/audit/compliance.h"

#include <algorithm>

#include "controller/audit/typed_members.h"
#include "controller/common/text.h"

namespace gpufed::audit {
namespace {

using typed::Bool;
using typed::Object;
using typed::Str;
using typed::Strings;

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

std::string ZoneList(const std::vector<std::string>& zones) { return "[" + Join(zones, ", ") + "]"; }

std::string Where(const nlohmann::json& target) {
  const std::string zone = Str(target, "zone"), region = Str(target, "region"), provider = Str(target, "provider");
  std::string where = "ran on " + Str(target, "cluster") + " (";
  where += "provider " + (provider.empty() ? std::string("?") : provider);
  where += ", zone " + (zone.empty() ? std::string("?") : zone);
  where += ", region " + (region.empty() ? std::string("?") : region) + ")";
  return where;
}

// Why a stdlib check does not apply under `rules`: the revision enforces none of it, and
// the policies that name it without enforcing it.
std::string NotEnforced(const ComplianceRules& rules, const std::string& check, const std::string& library) {
  std::string why = check + ": revision " + rules.revision + " enforces no " + library;
  auto it = rules.not_enforced.find(library);
  if (it != rules.not_enforced.end() && !it->second.empty()) why += " (" + Join(it->second, ", ") + ")";
  return why;
}

// The checks every revision has: the residency the workload carries, and the chosen
// cluster's own verdict. Returns false with `*v` a violation when one fails; the verdict
// check runs last (after the revision's), so it is separate.
bool CheckResidency(const nlohmann::json& data, const nlohmann::json& target, ComplianceVerdict* v) {
  const std::vector<std::string> residency = Strings(data, "residency");
  if (residency.empty()) return true;
  v->checked.push_back("data-residency " + ZoneList(residency));
  if (Contains(residency, Str(target, "zone"))) return true;
  v->outcome = ComplianceVerdict::Outcome::kViolation;
  v->rule = "data-residency";
  v->detail = "data must stay in " + Join(residency, ", ") + "; " + Where(target);
  return false;
}

bool CheckOwnVerdict(const nlohmann::json& r, const nlohmann::json& target, ComplianceVerdict* v) {
  v->checked.emplace_back("verdict");
  auto verdicts = r.find("verdicts");
  if (verdicts == r.end() || !verdicts->is_array()) return true;
  const std::string cluster = Str(target, "cluster");
  for (const nlohmann::json& c : *verdicts) {
    if (!c.is_object() || Str(c, "cluster") != cluster) continue;
    auto eligible = c.find("eligible");
    if (eligible != c.end() && eligible->is_boolean() && !eligible->get<bool>()) {
      const std::string rule = Str(c, "rule");
      v->outcome = ComplianceVerdict::Outcome::kViolation;
      v->rule = "verdict";
      v->detail = "placed on a cluster its own verdict rejected (" +
                  (rule.empty() ? std::string("no rule named") : rule) + ": " + Str(c, "reason") + "); " +
                  Where(target);
      return false;
    }
  }
  return true;
}

// The checks the revision enforces of the standard library's.
bool CheckRevisionRules(const nlohmann::json& data, const nlohmann::json& target, const ComplianceRules& rules,
                        ComplianceVerdict* v) {
  const std::string zone = Str(target, "zone"), sensitivity = Str(data, "sensitivity");
  auto fail = [&](const char* rule, const std::string& why) {
    v->outcome = ComplianceVerdict::Outcome::kViolation;
    v->rule = rule;
    v->detail = why + "; " + Where(target);
    return false;
  };
  if (sensitivity == "restricted") {
    if (!rules.restricted_only_onprem()) {
      v->not_applicable.push_back(NotEnforced(rules, "restricted-only-onprem", "stdlib/data-sensitivity"));
    } else {
      v->checked.emplace_back("restricted-only-onprem");
      const std::string provider = Str(target, "provider");
      // A record without the provider (written before targets carried it) cannot tell.
      if (!provider.empty() && provider != "onprem")
        return fail("restricted-only-onprem", "restricted data must stay on-prem");
    }
  }
  if (Bool(data, "pii")) {
    if (rules.zones.empty()) v->not_applicable.push_back(NotEnforced(rules, "pii-zones", "stdlib/compliance-zones"));
    for (const ComplianceRules::Zones& z : rules.zones) {
      v->checked.push_back("pii-zones " + ZoneList(z.pii_zones));
      if (!Contains(z.pii_zones, zone)) {
        return fail("pii-zones", "personal data must stay in " + ZoneList(z.pii_zones) + " (policy " + z.policy + ")");
      }
    }
  }
  for (const ComplianceRules::Zones& z : rules.zones) {
    auto bound = z.by_sensitivity.find(sensitivity);
    if (sensitivity.empty() || bound == z.by_sensitivity.end()) continue;
    v->checked.push_back("sensitivity-zones " + sensitivity + " " + ZoneList(bound->second));
    if (!Contains(bound->second, zone)) {
      return fail("sensitivity-zones",
                  sensitivity + " data must stay in " + ZoneList(bound->second) + " (policy " + z.policy + ")");
    }
  }
  return true;
}

}  // namespace

std::string ComplianceRules::Describe() const {
  std::vector<std::string> parts;
  if (restricted_only_onprem()) parts.emplace_back("restricted-only-onprem");
  for (const Zones& z : zones) {
    parts.push_back("pii-zones " + ZoneList(z.pii_zones));
    for (const auto& [sensitivity, list] : z.by_sensitivity) {
      parts.push_back("sensitivity-zones " + sensitivity + " " + ZoneList(list));
    }
  }
  return parts.empty() ? "data-residency only" : "data-residency; " + Join(parts, "; ");
}

const char* VerdictName(const ComplianceVerdict& verdict) {
  switch (verdict.outcome) {
    case ComplianceVerdict::Outcome::kOk: return "ok";
    case ComplianceVerdict::Outcome::kViolation: return "VIOLATION";
    case ComplianceVerdict::Outcome::kUnknown: return "unknown";
  }
  return "unknown";
}

ComplianceVerdict CheckPlacement(const nlohmann::json& decision, const Result<ComplianceRules>& rules) {
  ComplianceVerdict v;
  if (Str(decision, "kind") != "decision" || Str(decision, "outcome") != "placed") return v;
  const nlohmann::json& data = Object(decision, "data");
  const nlohmann::json& target = Object(decision, "target");
  if (!CheckResidency(data, target, &v)) return v;
  if (rules.ok() && !CheckRevisionRules(data, target, *rules, &v)) return v;
  if (!CheckOwnVerdict(decision, target, &v)) return v;
  if (!rules.ok()) {
    v.outcome = ComplianceVerdict::Outcome::kUnknown;
    v.detail = rules.status().message();
  }
  return v;
}

bool IsSensitivePlacement(const nlohmann::json& decision, const Result<ComplianceRules>& rules) {
  if (Str(decision, "kind") != "decision" || Str(decision, "outcome") != "placed") return false;
  const nlohmann::json& data = Object(decision, "data");
  const std::string sensitivity = Str(data, "sensitivity");
  if (sensitivity == "restricted" || Bool(data, "pii") || !Strings(data, "residency").empty()) return true;
  if (!rules.ok() || sensitivity.empty()) return false;
  return std::any_of(rules->zones.begin(), rules->zones.end(),
                     [&](const ComplianceRules::Zones& z) { return z.by_sensitivity.count(sensitivity) > 0; });
}

}  // namespace gpufed::audit
