#pragma once
// Selecting records of a journal, and the compliance, chargeback and showback report
// built from them. Works on the journal folder; records are self-checked as they are
// read (use the Verifier for the chain). Times shown are record_time.h's.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/audit/chargeback.h"
#include "controller/audit/compliance.h"
#include "controller/audit/env.h"
#include "controller/audit/record_time.h"
#include "controller/common/status.h"

namespace gpufed::audit {

struct QueryFilter {
  std::string workload, tenant, cluster, outcome, rule, kind;  // empty: any
  std::string principal;  // who submitted or cancelled (workload-submitted, workload-cancelled); empty: any
  std::optional<int64_t> from_micros;  // record (header, wall-clock) time >= from
  std::optional<int64_t> to_micros;    // record time < to
  // A virtual run's time since its start (RecordTime::micros of a virtual record).
  std::optional<int64_t> from_virtual_micros;
  std::optional<int64_t> to_virtual_micros;
};

// Sets the filter's bounds from --from/--to text (ParseTimeBound; empty: open).
// InvalidArgument naming the accepted forms.
Status SetTimeBounds(const std::string& from, const std::string& to, QueryFilter* filter);

// True when the record (RecordJson) passes every set criterion. `rule` matches a
// decision denied, rejected on some cluster, or warned by that rule.
bool MatchesFilter(const nlohmann::json& record, const QueryFilter& filter);

// Calls `fn` with every matching record, in sequence order, and the time it shows.
// DataLoss for a damaged record.
Status ScanRecords(Env& env, const std::string& audit_dir, const QueryFilter& filter,
                   const std::function<void(const nlohmann::json&, const RecordTime&)>& fn);
Status ScanRecords(Env& env, const std::string& audit_dir, const QueryFilter& filter,
                   const std::function<void(const nlohmann::json&)>& fn);

// "seq time kind workload tenant outcome cluster cost reason" rows; `times[i]` is the
// time of `records[i]` (ScanRecords'). Money in the currency's minor units. A submission's
// or cancel's reason says who: "by alice (api)", "by repository", "by alice, was queued".
std::string RenderQueryTable(const std::vector<nlohmann::json>& records, const std::vector<RecordTime>& times);
// The same with times from a timeline over `records` alone.
std::string RenderQueryTable(const std::vector<nlohmann::json>& records);

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
  };
  std::vector<Revision> revisions;       // in order of first use
  std::vector<std::string> rejected_revisions;
  // Where every restricted, PII or residency-bound workload was placed, and whether it
  // could (compliance.h).
  struct Sensitive {
    uint64_t seq;
    std::string time, workload, tenant, sensitivity, residency, cluster, zone, region, revision;
    bool pii = false;
    ComplianceVerdict verdict;
  };
  std::vector<Sensitive> sensitive;
  uint64_t violations = 0;  // of `sensitive`, those whose verdict is not ok
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

// The report over records with from <= time < to (ParseTimeBound; empty: open).
Result<ComplianceReport> BuildReport(Env& env, const std::string& audit_dir, const std::string& from,
                                     const std::string& to, const ComplianceRules& rules = {});
// Chargeback alone (`audit report --chargeback`), over the same period.
Result<Chargeback> BuildChargeback(Env& env, const std::string& audit_dir, const std::string& from,
                                   const std::string& to, ChargebackGroup by);
std::string RenderReportMarkdown(const ComplianceReport& report);
// CSV carries the showback table (day,tenant,cluster,placements,cost,currency), the
// part meant for spreadsheets and chargeback; Markdown and JSON carry everything.
std::string RenderReportCsv(const ComplianceReport& report);
nlohmann::json ReportToJson(const ComplianceReport& report);

}  // namespace gpufed::audit
