#pragma once
// Chargeback from the journal: what connectors metered (`attempt-metered` records:
// GPU-seconds x price per attempt, requeued attempts charged for what they used), per
// tenant, cluster or day, beside what the placer estimated for the placements (`decision`
// records' `cost`) — shown apart, never mixed. Amounts are exact micro-units; the metered
// sum equals the store's booked attempts (the `gpufed run` summary's total).
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller/audit/record_time.h"

namespace gpufed::audit {

enum class ChargebackGroup { kTenant, kCluster, kDay };
std::optional<ChargebackGroup> ParseChargebackGroup(std::string_view name);  // tenant | cluster | day
const char* ChargebackGroupName(ChargebackGroup group);

struct ChargebackRow {
  std::string group;              // tenant, cluster or day; "total" in totals
  std::string currency;           // empty when nothing in the row had a price
  int64_t gpu_milliseconds = 0;   // metered GPU-seconds x 1000 (exact)
  int64_t metered_micros = 0;
  int64_t estimated_micros = 0;
  int64_t attempts = 0;           // metered attempts
  int64_t requeued_attempts = 0;  // of them: lost or preempted, then run again
  int64_t placements = 0;         // placed decisions (the estimates)
};

struct Chargeback {
  ChargebackGroup by = ChargebackGroup::kTenant;
  std::vector<ChargebackRow> rows;    // by group, then currency
  std::vector<ChargebackRow> totals;  // one per currency
  // attempt-metered records for an attempt already counted (a controller crash between
  // the record and its booking); each attempt counts once, as its first record says.
  int64_t duplicate_records = 0;
};

// Feed the records of the period in sequence order; other kinds are skipped.
class ChargebackBuilder {
 public:
  explicit ChargebackBuilder(ChargebackGroup by) : by_(by) {}
  void Add(const nlohmann::json& record, const RecordTime& time);
  Chargeback Finish() const;

 private:
  ChargebackRow& Row(const std::string& group, const std::string& currency);

  ChargebackGroup by_;
  std::map<std::pair<std::string, std::string>, ChargebackRow> rows_;  // (group, currency)
  std::set<std::string> attempts_seen_;                                // "<uid>.a<attempt>"
  int64_t duplicates_ = 0;
};

// "7200.5" GPU-seconds from their milli count, exact: three decimals.
std::string GpuSecondsText(int64_t gpu_milliseconds);

// CSV columns exactly `group,gpu_seconds,metered,estimated,currency`, one row per group
// (and currency), exact decimals, no totals row (spreadsheets sum).
std::string RenderChargebackCsv(const Chargeback& chargeback);
// A table for people: GPU-hours, money in the currency's minor units, totals.
std::string RenderChargebackMarkdown(const Chargeback& chargeback);
nlohmann::json ChargebackToJson(const Chargeback& chargeback);

}  // namespace gpufed::audit
