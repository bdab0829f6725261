#include "controller/audit/chargeback.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "controller/audit/typed_members.h"
#include "controller/common/action_key.h"
#include "controller/common/money.h"
#include "controller/common/text.h"

namespace gpufed::audit {
namespace {

using typed::Str;
using typed::Int;

// GPU-seconds as recorded (to the millisecond) -> an exact integer count of milli units.
int64_t GpuMillis(const nlohmann::json& j) {
  auto it = j.find("gpuSeconds");
  if (it == j.end() || !it->is_number()) return 0;
  const double v = it->get<double>();
  // Beyond 2^53 milli-seconds (285,000 GPU-years) a double holds no exact count anyway.
  if (!std::isfinite(v) || v <= 0 || v > 9.0e12) return 0;
  return std::llround(v * 1000);
}

std::string Amount(int64_t micros) { return Money(micros, "").AmountString(); }

void Accumulate(ChargebackRow& into, const ChargebackRow& row) {
  into.gpu_milliseconds = Money::SaturatingAdd(into.gpu_milliseconds, row.gpu_milliseconds);
  into.metered_micros = Money::SaturatingAdd(into.metered_micros, row.metered_micros);
  into.estimated_micros = Money::SaturatingAdd(into.estimated_micros, row.estimated_micros);
  into.attempts += row.attempts;
  into.requeued_attempts += row.requeued_attempts;
  into.placements += row.placements;
}

std::string GpuHours(int64_t gpu_milliseconds) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(gpu_milliseconds) / 3.6e6);
  return buf;
}

}  // namespace

std::optional<ChargebackGroup> ParseChargebackGroup(std::string_view name) {
  if (name == "tenant") return ChargebackGroup::kTenant;
  if (name == "cluster") return ChargebackGroup::kCluster;
  if (name == "day") return ChargebackGroup::kDay;
  return std::nullopt;
}

const char* ChargebackGroupName(ChargebackGroup group) {
  switch (group) {
    case ChargebackGroup::kTenant: return "tenant";
    case ChargebackGroup::kCluster: return "cluster";
    case ChargebackGroup::kDay: return "day";
  }
  return "tenant";
}

ChargebackRow& ChargebackBuilder::Row(const std::string& group, const std::string& currency) {
  ChargebackRow& row = rows_[{group, currency}];
  row.group = group;
  row.currency = currency;
  return row;
}

void ChargebackBuilder::Add(const nlohmann::json& r, const RecordTime& time) {
  const std::string kind = Str(r, "kind");
  const bool metered = kind == "attempt-metered";
  const nlohmann::json* target = nullptr;
  if (!metered) {
    if (kind != "decision" || Str(r, "outcome") != "placed") return;
    auto it = r.find("target");
    if (it == r.end() || !it->is_object()) return;
    target = &*it;
  }
  const std::string cluster = metered ? Str(r, "cluster") : Str(*target, "cluster");
  const std::string group = by_ == ChargebackGroup::kTenant    ? Str(r, "tenant")
                            : by_ == ChargebackGroup::kCluster ? cluster
                                                               : time.day;
  Result<Money> cost = Money::Parse(Str(r, "cost"));
  const int64_t micros = cost.ok() ? cost->micros() : 0;
  ChargebackRow& row = Row(group, cost.ok() ? cost->currency() : "");
  if (!metered) {
    row.estimated_micros = Money::SaturatingAdd(row.estimated_micros, micros);
    ++row.placements;
    return;
  }
  // Each attempt is charged once, as its first record says (the loop books that one).
  if (!attempts_seen_.insert(ActionKey(Str(r, "uid"), static_cast<int>(Int(r, "attempt")))).second) {
    ++duplicates_;
    return;
  }
  row.metered_micros = Money::SaturatingAdd(row.metered_micros, micros);
  row.gpu_milliseconds = Money::SaturatingAdd(row.gpu_milliseconds, GpuMillis(r));
  ++row.attempts;
  const std::string outcome = Str(r, "outcome");
  if (outcome == "lost" || outcome == "preempted") ++row.requeued_attempts;
}

Chargeback ChargebackBuilder::Finish() const {
  // A row without a currency and without money (attempts lost before their cluster
  // reported them: nothing used, nothing charged) joins its group's first priced row
  // rather than standing alone; one with an amount keeps its own row (never relabelled).
  std::map<std::pair<std::string, std::string>, ChargebackRow> rows = rows_;
  for (auto it = rows.begin(); it != rows.end();) {
    const auto& [group, currency] = it->first;
    const ChargebackRow& row = it->second;
    auto priced = rows.upper_bound({group, ""});
    if (!currency.empty() || row.metered_micros != 0 || row.estimated_micros != 0 || priced == rows.end() ||
        priced->first.first != group) {
      ++it;
      continue;
    }
    Accumulate(priced->second, row);
    it = rows.erase(it);
  }
  Chargeback out;
  out.by = by_;
  out.duplicate_records = duplicates_;
  std::map<std::string, ChargebackRow> totals;
  for (const auto& [key, row] : rows) {
    out.rows.push_back(row);
    ChargebackRow& total = totals[row.currency];
    total.group = "total";
    total.currency = row.currency;
    Accumulate(total, row);
  }
  for (const auto& [currency, total] : totals) out.totals.push_back(total);
  return out;
}

std::string GpuSecondsText(int64_t gpu_milliseconds) {
  const int64_t abs = gpu_milliseconds < 0 ? -gpu_milliseconds : gpu_milliseconds;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%lld.%03lld", gpu_milliseconds < 0 ? "-" : "", static_cast<long long>(abs / 1000),
                static_cast<long long>(abs % 1000));
  return buf;
}

std::string RenderChargebackCsv(const Chargeback& c) {
  std::string out = "group,gpu_seconds,metered,estimated,currency\n";
  for (const ChargebackRow& r : c.rows) {
    out += CsvField(r.group) + "," + GpuSecondsText(r.gpu_milliseconds) + "," + Amount(r.metered_micros) + "," +
           Amount(r.estimated_micros) + "," + CsvField(r.currency) + "\n";
  }
  return out;
}

std::string RenderChargebackMarkdown(const Chargeback& c) {
  std::ostringstream out;
  out << "| " << ChargebackGroupName(c.by)
      << " | GPU-hours | metered | estimated | attempts (requeued) | placements |\n"
         "| --- | ---: | ---: | ---: | ---: | ---: |\n";
  auto line = [&](const ChargebackRow& r, bool bold) {
    const std::string b = bold ? "**" : "";
    out << "| " << b << r.group << b << " | " << GpuHours(r.gpu_milliseconds) << " | " << b
        << Money(r.metered_micros, r.currency).ToDisplayString() << b << " | "
        << Money(r.estimated_micros, r.currency).ToDisplayString() << " | " << r.attempts << " ("
        << r.requeued_attempts << ") | " << r.placements << " |\n";
  };
  for (const ChargebackRow& r : c.rows) line(r, false);
  for (const ChargebackRow& r : c.totals) line(r, true);
  out << "\nMetered: what the connectors measured per attempt (GPU-seconds x price), attempts that were lost or "
         "preempted included, charged for what they used. Estimated: the placer's estimate at each placement, "
         "for comparison only.\n";
  if (c.duplicate_records > 0) {
    out << "\n" << c.duplicate_records
        << " repeated attempt-metered record(s) (a controller restart between a record and its booking) were "
           "counted once.\n";
  }
  return out.str();
}

nlohmann::json ChargebackToJson(const Chargeback& c) {
  auto row = [](const ChargebackRow& r) {
    return nlohmann::json{{"group", r.group},
                          {"gpuSeconds", GpuSecondsText(r.gpu_milliseconds)},
                          {"metered", Amount(r.metered_micros)},
                          {"estimated", Amount(r.estimated_micros)},
                          {"currency", r.currency},
                          {"attempts", r.attempts},
                          {"requeuedAttempts", r.requeued_attempts},
                          {"placements", r.placements}};
  };
  nlohmann::json rows = nlohmann::json::array(), totals = nlohmann::json::array();
  for (const ChargebackRow& r : c.rows) rows.push_back(row(r));
  for (const ChargebackRow& r : c.totals) totals.push_back(row(r));
  return {{"by", ChargebackGroupName(c.by)},
          {"rows", rows},
          {"totals", totals},
          {"duplicateRecords", c.duplicate_records}};
}

}  // namespace gpufed::audit
