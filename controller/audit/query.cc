#include "controller/audit/query.h"

#include <algorithm>
#include <tuple>

#include "controller/audit/reader.h"
#include "controller/audit/record.h"
#include "controller/audit/typed_members.h"
#include "controller/common/money.h"
#include "controller/common/text.h"

namespace gpufed::audit {
namespace {

using typed::Str;
using typed::Strings;

uint64_t Seq(const nlohmann::json& r) {
  auto it = r.find("seq");
  return it != r.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

bool ContainsString(const nlohmann::json& j, const char* key, const std::string& value) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return false;
  return std::any_of(it->begin(), it->end(), [&](const nlohmann::json& v) {
    return v.is_string() && (v == value || v.get<std::string>().rfind(value + " ", 0) == 0 ||
                             v.get<std::string>().find(" " + value) != std::string::npos);
  });
}

std::string ClusterOf(const nlohmann::json& r) {
  if (r.contains("target") && r["target"].is_object()) return Str(r["target"], "cluster");
  return Str(r, "cluster");
}

// A record's money member for a table; the text as is when it is not money.
std::string MoneyCell(const std::string& text) {
  Result<Money> m = Money::Parse(text);
  return m.ok() ? m->ToDisplayString() : text;
}

bool InVirtualRange(const RecordTime& t, const QueryFilter& f) {
  if (!f.from_virtual_micros && !f.to_virtual_micros) return true;
  if (!t.is_virtual) return false;
  if (f.from_virtual_micros && t.micros < *f.from_virtual_micros) return false;
  return !(f.to_virtual_micros && t.micros >= *f.to_virtual_micros);
}

}  // namespace

bool MatchesFilter(const nlohmann::json& r, const QueryFilter& f) {
  if (!f.kind.empty() && Str(r, "kind") != f.kind) return false;
  if (!f.workload.empty() && Str(r, "workload") != f.workload) return false;
  if (!f.tenant.empty() && Str(r, "tenant") != f.tenant) return false;
  if (!f.principal.empty() && Str(r, "principal") != f.principal) return false;
  if (!f.outcome.empty() && Str(r, "outcome") != f.outcome) return false;
  if (!f.cluster.empty() && ClusterOf(r) != f.cluster) return false;
  if (!f.rule.empty()) {
    bool hit = ContainsString(r, "deniedBy", f.rule) || ContainsString(r, "warnings", f.rule);
    if (!hit && r.contains("verdicts") && r["verdicts"].is_array()) {
      for (const nlohmann::json& v : r["verdicts"]) {
        if (Str(v, "rule") == f.rule || ContainsString(v, "warnings", f.rule)) hit = true;
      }
    }
    if (!hit && r.contains("verdictGroups") && r["verdictGroups"].is_array()) {
      for (const nlohmann::json& g : r["verdictGroups"]) hit = hit || Str(g, "rule") == f.rule;
    }
    if (!hit) return false;
  }
  if (f.from_micros || f.to_micros) {
    std::optional<int64_t> t = ParseTimeMicros(Str(r, "time"));
    if (!t) return false;
    if (f.from_micros && *t < *f.from_micros) return false;
    if (f.to_micros && *t >= *f.to_micros) return false;
  }
  return true;
}

Status SetTimeBounds(const std::string& from, const std::string& to, QueryFilter* filter) {
  for (const auto& [text, wall, virt] : {std::tuple{&from, &filter->from_micros, &filter->from_virtual_micros},
                                         std::tuple{&to, &filter->to_micros, &filter->to_virtual_micros}}) {
    if (text->empty()) continue;
    std::optional<TimeBound> bound = ParseTimeBound(*text);
    if (!bound) {
      return InvalidArgument(
          "--from/--to take a date (2026-11-01), an RFC 3339 UTC time (2026-11-01T10:00:00Z) or, "
          "for a simulated run, its virtual time since the start (6h, +1d2h); not '" +
          *text + "'");
    }
    (bound->is_virtual ? *virt : *wall) = bound->micros;
  }
  return Status::Ok();
}

Status ScanRecords(Env& env, const std::string& audit_dir, const QueryFilter& filter,
                   const std::function<void(const nlohmann::json&)>& fn) {
  return ScanRecords(env, audit_dir, filter, [&](const nlohmann::json& r, const RecordTime&) { fn(r); });
}

Status ScanRecords(Env& env, const std::string& audit_dir, const QueryFilter& filter,
                   const std::function<void(const nlohmann::json&, const RecordTime&)>& fn) {
  JournalReader reader(&env, audit_dir);
  return ScanRecords(reader, filter, fn);
}

Status ScanRecords(JournalRecordSource& source, const QueryFilter& filter,
                   const std::function<void(const nlohmann::json&, const RecordTime&)>& fn) {
  RecordTimeline timeline;
  GPUFED_RETURN_IF_ERROR(source.Seek(1));
  std::vector<JournalEntry> batch;
  for (;;) {
    batch.clear();
    Result<size_t> n = source.Next(4096, UINT64_MAX, &batch);
    if (!n.ok()) return n.status();
    if (*n == 0) return Status::Ok();
    for (const JournalEntry& e : batch) {
      Result<nlohmann::json> j = RecordJson(e.line);
      if (!j.ok()) return Status(StatusCode::kDataLoss, "seq " + std::to_string(e.seq) + ": " + j.status().message());
      // Every record moves the timeline, also those the filter drops.
      const RecordTime time = timeline.Next(*j);
      if (MatchesFilter(*j, filter) && InVirtualRange(time, filter)) fn(*j, time);
    }
  }
}

std::string RenderQueryTable(const std::vector<nlohmann::json>& records) {
  RecordTimeline timeline;
  std::vector<RecordTime> times;
  times.reserve(records.size());
  for (const nlohmann::json& r : records) times.push_back(timeline.Next(r));
  return RenderQueryTable(records, times);
}

std::string RenderQueryTable(const std::vector<nlohmann::json>& records, const std::vector<RecordTime>& times) {
  std::vector<std::vector<std::string>> rows = {
      {"SEQ", "TIME", "KIND", "WORKLOAD", "TENANT", "OUTCOME", "CLUSTER", "COST", "REASON"}};
  for (size_t i = 0; i < records.size(); ++i) {
    const nlohmann::json& r = records[i];
    std::string reason = Str(r, "reason");
    if (reason.empty()) {
      const std::vector<std::string> problems = Strings(r, "problems");
      if (!problems.empty()) reason = problems.front();
    }
    // Who submitted or cancelled, and how or from which state.
    if (reason.empty() && r.contains("principal")) {
      const std::string principal = Str(r, "principal"), source = Str(r, "source");
      reason = "by " + principal + (!source.empty() && source != principal ? " (" + source + ")" : "") +
               (r.contains("state") ? ", was " + Str(r, "state") : "");
    }
    if (reason.empty()) reason = Str(r, "revision");
    if (reason.size() > 80) reason = reason.substr(0, 77) + "...";
    // A connector change (added, replaced, removed, returned, retired) is its record's outcome.
    const std::string outcome = r.contains("change") ? Str(r, "change") : Str(r, "outcome");
    rows.push_back({std::to_string(Seq(r)), i < times.size() ? times[i].text : Str(r, "time"), Str(r, "kind"),
                    Str(r, "workload"), Str(r, "tenant"), outcome, ClusterOf(r), MoneyCell(Str(r, "cost")), reason});
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace gpufed::audit
