#pragma once
// Selecting records of a journal (`gpufed audit query`, and what report.h builds on).
// Works on the journal folder, or on any storage's JournalRecordSource (journal_storage.h);
// records are self-checked as they are read (use the Verifier
// for the chain). Times shown are record_time.h's.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/audit/env.h"
#include "controller/audit/journal_storage.h"
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

// Calls `fn` with every matching record of `source` from its first, in sequence order,
// and the time it shows. DataLoss for a damaged record.
Status ScanRecords(JournalRecordSource& source, const QueryFilter& filter,
                   const std::function<void(const nlohmann::json&, const RecordTime&)>& fn);
// The same over the file journal in `audit_dir`.
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

}  // namespace gpufed::audit
