#pragma once
// `gpufed audit report`: over a period of the journal, the decisions and denials, the
// policy revisions in force, a compliance verdict on every restricted, PII or
// residency-bound placement (compliance.h), chargeback from metered usage and showback of
// the placer's estimates. Times shown are record_time.h's.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/audit/chargeback.h"
#include "controller/audit/compliance.h"
#include "controller/audit/env.h"
#include "controller/audit/journal_storage.h"
#include "controller/common/status.h"

namespace gpufed::audit {

// The compliance rules of the policy revision that decided `decision` (a placed decision
// record), or why they cannot be known (the message becomes the verdict's "unknown: ..."
// detail). Called for every placed decision; the caller caches. The CLI's loads the
// recorded revision (cli/compliance_rules.h).
using ComplianceRulesFor = std::function<Result<ComplianceRules>(const nlohmann::json& decision)>;

struct ComplianceReport {
  std::string from, to;                  // as given (RFC 3339 or dates)
  uint64_t first_seq = 0, last_seq = 0;  // records in range
  std::map<std::string, uint64_t> outcomes;       // placed/queued/rejected -> count
  std::map<std::string, uint64_t> denials_by_rule;
  struct Revision {
    std::string id;
    std::string first_seen, last_seen;  // of its decisions in the period; empty: none
    uint64_t decisions = 0;
    bool activated_in_range = false;
    // What it enforces of the compliance checks (ComplianceRules::Describe), or why that
    // is not known; both empty when none of its decisions placed work.
    std::string rules, rules_unavailable;
  };
  std::vector<Revision> revisions;       // in order of first use
  std::vector<std::string> rejected_revisions;
  // Where every restricted, PII or residency-bound workload was placed, and whether its
  // revision let it go there (compliance.h).
  struct Sensitive {
    uint64_t seq;
    std::string time, workload, tenant, sensitivity, residency, cluster, zone, region, revision;
    bool pii = false;
    ComplianceVerdict verdict;
  };
  std::vector<Sensitive> sensitive;
  uint64_t violations = 0;  // of `sensitive`, those whose verdict is a violation
  uint64_t unknown = 0;     // ... and those that could not be judged (revision not available)
  // Metered chargeback per tenant (`attempt-metered`), estimates beside it.
  Chargeback chargeback;
  // Showback: placements and estimated cost per day (UTC), tenant and cluster.
  struct Showback {
    std::string day, tenant, cluster, currency;
    uint64_t placements = 0;
    int64_t cost_micros = 0;
  };
  std::vector<Showback> showback;  // sorted by day, tenant, cluster
};

// The report over records with from <= time < to (ParseTimeBound; empty: open), each
// placement judged by the rules `rules_for` gives for its decision.
Result<ComplianceReport> BuildReport(Env& env, const std::string& audit_dir, const std::string& from,
                                     const std::string& to, const ComplianceRulesFor& rules_for);
// Chargeback alone (`audit report --chargeback`), over the same period.
Result<Chargeback> BuildChargeback(Env& env, const std::string& audit_dir, const std::string& from,
                                   const std::string& to, ChargebackGroup by);
// The same two over any journal's records (a PostgreSQL table: `audit report --store`);
// the snapshots `rules_for` needs are still the caller's to find.
Result<ComplianceReport> BuildReport(JournalRecordSource& source, const std::string& from, const std::string& to,
                                     const ComplianceRulesFor& rules_for);
Result<Chargeback> BuildChargeback(JournalRecordSource& source, const std::string& from, const std::string& to,
                                   ChargebackGroup by);
std::string RenderReportMarkdown(const ComplianceReport& report);
// CSV carries the showback table (day,tenant,cluster,placements,cost,currency), the
// part meant for spreadsheets and chargeback; Markdown and JSON carry everything.
std::string RenderReportCsv(const ComplianceReport& report);
nlohmann::json ReportToJson(const ComplianceReport& report);

}  // namespace gpufed::audit
