#pragma once
// The compliance verdict on one placement, from its decision record and the rules of the
// policy revision that decided it: did restricted, personal or residency-bound data run
// where that revision let it go? The placer never places such work elsewhere, so a
// violation means a bug or a forged record; `gpufed audit report` makes it loud.
//
// Checks, in order (the first that fails is the verdict):
//   data-residency          the target's zone is not in the workload's data.residency
//                           (the placer's built-in check: every revision has it);
//   restricted-only-onprem  restricted data on a cluster whose provider is not onprem
//                           (stdlib/data-sensitivity's rule; only where the revision
//                           enforces it);
//   pii-zones               PII in a zone outside a stdlib/compliance-zones policy's
//                           piiZones (that revision's, per enforcing policy);
//   sensitivity-zones       data of a sensitivity outside the zones the same policy's
//                           zonesBySensitivity lists for it;
//   verdict                 the chosen cluster's own verdict in the record rejected it.
//
// The rules come from the caller: audit/ cannot load a repository (no config/ or policy
// engine here), so `gpufed audit report` loads each recorded revision in the CLI
// (cli/compliance_rules.h) and hands its rules in. A revision it cannot recover makes the
// verdict `unknown` (after the checks every revision has: a violation of those is still
// one), never a check against some default.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/common/status.h"

namespace gpufed::audit {

// What one policy revision enforces of the checks above. A stdlib rule counts only in a
// policy with enforcement `deny`: `warn` and `dryrun` let the placement happen, so under
// such a revision the check does not apply.
struct ComplianceRules {
  std::string revision;
  // The deny policies that import stdlib/data-sensitivity (restricted-only-onprem).
  std::vector<std::string> restricted_onprem_policies;
  // Each deny policy that runs stdlib/compliance-zones' filter, with its params.
  struct Zones {
    std::string policy;
    std::vector<std::string> pii_zones;  // PII only here (empty: nowhere)
    std::map<std::string, std::vector<std::string>> by_sensitivity;  // sensitivity -> its zones
  };
  std::vector<Zones> zones;
  // Policies naming a stdlib rule without enforcing it, by library policy
  // ("stdlib/compliance-zones" -> "pii (enforcement warn)"): said where a check does not
  // apply, so a reader sees why.
  std::map<std::string, std::vector<std::string>> not_enforced;

  bool restricted_only_onprem() const { return !restricted_onprem_policies.empty(); }
  // One line for people: "restricted-only-onprem; pii-zones [ch]; sensitivity-zones
  // confidential [eu]" ("data-residency only" when it enforces nothing of the stdlib's).
  std::string Describe() const;
};

struct ComplianceVerdict {
  enum class Outcome { kOk, kViolation, kUnknown };
  Outcome outcome = Outcome::kOk;
  std::string rule;    // the check that failed (violation)
  // Violation: why, and where the work ran: "data must stay in eu; ran on us-cloud (zone
  // us, region us-east)". Unknown: why its revision's rules are not known.
  std::string detail;
  // The checks that applied to this placement's data, in order ("pii-zones [ch]").
  std::vector<std::string> checked;
  // Checks its data would call for that its revision does not enforce, with why
  // ("pii-zones: revision R enforces no stdlib/compliance-zones").
  std::vector<std::string> not_applicable;

  bool ok() const { return outcome == Outcome::kOk; }
  bool violation() const { return outcome == Outcome::kViolation; }
  bool unknown() const { return outcome == Outcome::kUnknown; }
};

// "ok", "VIOLATION" or "unknown": the verdict's word in reports.
const char* VerdictName(const ComplianceVerdict& verdict);

// For a `decision` record with outcome `placed` (others: ok, nothing checked). `rules` is
// the revision's, or why they are not known (then the verdict is unknown unless a check
// every revision has fails).
ComplianceVerdict CheckPlacement(const nlohmann::json& decision, const Result<ComplianceRules>& rules);

// True when the placement's data is such that some check applies to it: restricted, PII,
// residency-bound, or of a sensitivity the rules bind to zones.
bool IsSensitivePlacement(const nlohmann::json& decision, const Result<ComplianceRules>& rules);

}  // namespace gpufed::audit
