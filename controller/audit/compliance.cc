#include "controller/audit/compliance.h"

#include <algorithm>

#include "controller/audit/typed_members.h"
#include "controller/common/text.h"

namespace gpufed::audit {
namespace {

using typed::Str;
using typed::Object;
using typed::Strings;

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

ComplianceVerdict Violation(std::string rule, const std::string& why, const nlohmann::json& target) {
  const std::string zone = Str(target, "zone"), region = Str(target, "region"), provider = Str(target, "provider");
  std::string where = "ran on " + Str(target, "cluster") + " (";
  where += "provider " + (provider.empty() ? std::string("?") : provider);
  where += ", zone " + (zone.empty() ? std::string("?") : zone);
  where += ", region " + (region.empty() ? std::string("?") : region) + ")";
  return {false, std::move(rule), why + "; " + where};
}

}  // namespace

ComplianceVerdict CheckPlacement(const nlohmann::json& r, const ComplianceRules& rules) {
  if (Str(r, "kind") != "decision" || Str(r, "outcome") != "placed") return {};
  const nlohmann::json& data = Object(r, "data");
  const nlohmann::json& target = Object(r, "target");
  const std::string zone = Str(target, "zone");
  const std::vector<std::string> residency = Strings(data, "residency");
  if (!residency.empty() && !Contains(residency, zone)) {
    return Violation("data-residency", "data must stay in " + Join(residency, ", "), target);
  }
  const std::string provider = Str(target, "provider");
  // A record without the provider (written before targets carried it) cannot tell.
  if (Str(data, "sensitivity") == "restricted" && !provider.empty() && provider != "onprem") {
    return Violation("restricted-only-onprem", "restricted data must stay on-prem", target);
  }
  auto pii = data.find("pii");
  if (pii != data.end() && pii->is_boolean() && pii->get<bool>() && !rules.pii_zones.empty() &&
      !Contains(rules.pii_zones, zone)) {
    return Violation("pii-zones", "personal data must stay in " + Join(rules.pii_zones, ", "), target);
  }
  auto verdicts = r.find("verdicts");
  if (verdicts != r.end() && verdicts->is_array()) {
    const std::string cluster = Str(target, "cluster");
    for (const nlohmann::json& v : *verdicts) {
      if (!v.is_object() || Str(v, "cluster") != cluster) continue;
      auto eligible = v.find("eligible");
      if (eligible != v.end() && eligible->is_boolean() && !eligible->get<bool>()) {
        const std::string rule = Str(v, "rule");
        return Violation("verdict", "placed on a cluster its own verdict rejected (" +
                                        (rule.empty() ? std::string("no rule named") : rule) + ": " +
                                        Str(v, "reason") + ")",
                         target);
      }
    }
  }
  return {};
}

}  // namespace gpufed::audit
