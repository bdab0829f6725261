#include "controller/audit/query.h"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "controller/audit/reader.h"
#include "controller/audit/record.h"
#include "controller/audit/typed_members.h"
#include "controller/common/money.h"
#include "controller/common/text.h"

namespace gpufed::audit {
namespace {

using typed::Bool;
using typed::Object;
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

// Exact (JSON) and for people (tables).
std::string MoneyText(int64_t micros, const std::string& currency) { return Money(micros, currency).ToString(); }
std::string MoneyDisplay(int64_t micros, const std::string& currency) {
  return Money(micros, currency).ToDisplayString();
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
  RecordTimeline timeline;
  JournalReader reader(&env, audit_dir);
  GPUFED_RETURN_IF_ERROR(reader.Seek(1));
  std::vector<JournalEntry> batch;
  for (;;) {
    batch.clear();
    Result<size_t> n = reader.Next(4096, UINT64_MAX, &batch);
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

Result<Chargeback> BuildChargeback(Env& env, const std::string& audit_dir, const std::string& from,
                                   const std::string& to, ChargebackGroup by) {
  QueryFilter filter;
  GPUFED_RETURN_IF_ERROR(SetTimeBounds(from, to, &filter));
  ChargebackBuilder builder(by);
  GPUFED_RETURN_IF_ERROR(ScanRecords(env, audit_dir, filter,
                                     [&](const nlohmann::json& r, const RecordTime& time) { builder.Add(r, time); }));
  return builder.Finish();
}

Result<ComplianceReport> BuildReport(Env& env, const std::string& audit_dir, const std::string& from,
                                     const std::string& to, const ComplianceRules& rules) {
  QueryFilter filter;
  GPUFED_RETURN_IF_ERROR(SetTimeBounds(from, to, &filter));
  ComplianceReport report;
  ChargebackBuilder chargeback(ChargebackGroup::kTenant);
  report.from = from;
  report.to = to;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, ComplianceReport::Showback> showback;
  std::map<std::string, size_t> revision_index;
  Status s = ScanRecords(env, audit_dir, filter, [&](const nlohmann::json& r, const RecordTime& at) {
    uint64_t seq = Seq(r);
    if (report.first_seq == 0) report.first_seq = seq;
    report.last_seq = seq;
    chargeback.Add(r, at);
    std::string kind = Str(r, "kind");
    const std::string& time = at.text;
    if (kind == "policy-activated" || kind == "policy-rejected") {
      std::string id = Str(r, "revision");
      if (kind == "policy-rejected") {
        report.rejected_revisions.push_back(id);
        return;
      }
      // The columns are the revision's decisions' times: an activation carries the wall
      // clock, which in a simulated run is not the run's time.
      auto [it, inserted] = revision_index.try_emplace(id, report.revisions.size());
      if (inserted) report.revisions.push_back({id, "", "", 0, true});
      report.revisions[it->second].activated_in_range = true;
      return;
    }
    if (kind != "decision") return;
    std::string outcome = Str(r, "outcome");
    report.outcomes[outcome]++;
    std::string revision = Str(r, "revision");
    auto [it, inserted] = revision_index.try_emplace(revision, report.revisions.size());
    if (inserted) report.revisions.push_back({revision, time, time, 0, false});
    ComplianceReport::Revision& rev = report.revisions[it->second];
    if (rev.first_seen.empty()) rev.first_seen = time;
    rev.decisions++;
    rev.last_seen = time;
    for (const std::string& rule : Strings(r, "deniedBy")) report.denials_by_rule[rule]++;
    if (outcome != "placed") return;
    const nlohmann::json& target = Object(r, "target");
    const nlohmann::json& data = Object(r, "data");
    std::string sensitivity = Str(data, "sensitivity");
    bool pii = Bool(data, "pii");
    std::string residency;
    for (const std::string& zone : Strings(data, "residency")) residency += (residency.empty() ? "" : " ") + zone;
    if (sensitivity == "restricted" || pii || !residency.empty()) {
      ComplianceVerdict verdict = CheckPlacement(r, rules);
      if (!verdict.ok) ++report.violations;
      report.sensitive.push_back({seq, time, Str(r, "workload"), Str(r, "tenant"), sensitivity, residency,
                                  Str(target, "cluster"), Str(target, "zone"), Str(target, "region"), revision, pii,
                                  std::move(verdict)});
    }
    Result<Money> cost = Money::Parse(Str(r, "cost"));
    const std::string& day = at.day;
    std::string currency = cost.ok() ? cost->currency() : "";
    auto key = std::make_tuple(day, Str(r, "tenant"), Str(target, "cluster"), currency);
    ComplianceReport::Showback& row = showback[key];
    row.day = day;
    row.tenant = std::get<1>(key);
    row.cluster = std::get<2>(key);
    row.currency = currency;
    row.placements++;
    if (cost.ok()) row.cost_micros += cost->micros();
  });
  if (!s.ok()) return s;
  for (auto& [key, row] : showback) report.showback.push_back(row);
  report.chargeback = chargeback.Finish();
  return report;
}

std::string RenderReportMarkdown(const ComplianceReport& r) {
  std::ostringstream out;
  out << "# gpufed audit report\n\n";
  if (r.violations > 0) {
    // First, before anything else: a violation only comes from a policy change or a bug.
    out << "> **COMPLIANCE VIOLATION: " << r.violations << " placement" << (r.violations == 1 ? "" : "s")
        << " of restricted, PII or residency-bound data ran where the data may not go.**\n";
    for (const auto& v : r.sensitive) {
      if (v.verdict.ok) continue;
      out << "> - seq " << v.seq << " " << v.time << ": " << v.tenant << "/" << v.workload << ": **VIOLATION** "
          << v.verdict.rule << ": " << v.verdict.detail << " (revision `" << v.revision << "`)\n";
    }
    out << "\n";
  }
  out << "Period: " << (r.from.empty() ? "beginning of the journal" : r.from) << " to "
      << (r.to.empty() ? "its end" : r.to) << " (UTC or virtual run time, end exclusive). Records seq " << r.first_seq
      << "-" << r.last_seq << ".\n\n";
  out << "## Decisions\n\n| outcome | count |\n| --- | ---: |\n";
  for (const auto& [outcome, n] : r.outcomes) out << "| " << outcome << " | " << n << " |\n";
  out << "\n## Denials by rule\n\n";
  if (r.denials_by_rule.empty())
    out << "None.\n";
  else {
    out << "| rule | workloads denied |\n| --- | ---: |\n";
    for (const auto& [rule, n] : r.denials_by_rule) out << "| " << rule << " | " << n << " |\n";
  }
  out << "\n## Policy revisions in force\n\n| revision | first decision | last decision | decisions | activated in "
         "period |\n"
         "| --- | --- | --- | ---: | --- |\n";
  for (const auto& rev : r.revisions) {
    out << "| `" << rev.id << "` | " << (rev.first_seen.empty() ? "-" : rev.first_seen) << " | "
        << (rev.last_seen.empty() ? "-" : rev.last_seen) << " | " << rev.decisions << " | "
        << (rev.activated_in_range ? "yes" : "no") << " |\n";
  }
  if (!r.rejected_revisions.empty()) {
    out << "\nRejected revisions (never active):";
    for (const std::string& id : r.rejected_revisions) out << " `" << id << "`";
    out << "\n";
  }
  out << "\n## Restricted, PII and residency-bound workloads\n\n";
  if (r.sensitive.empty())
    out << "None placed in this period.\n";
  else {
    out << (r.violations == 0
                ? "Compliance: all " + std::to_string(r.sensitive.size()) + " placements ok.\n\n"
                : "Compliance: **" + std::to_string(r.violations) + " VIOLATION" + (r.violations == 1 ? "" : "S") +
                      "** in " + std::to_string(r.sensitive.size()) + " placements.\n\n");
    out << "| seq | time | workload | tenant | sensitivity | PII | residency | cluster | zone | region | verdict |\n"
           "| ---: | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const auto& s : r.sensitive) {
      out << "| " << s.seq << " | " << s.time << " | " << s.workload << " | " << s.tenant << " | " << s.sensitivity
          << " | " << (s.pii ? "yes" : "no") << " | " << (s.residency.empty() ? "-" : s.residency) << " | " << s.cluster
          << " | " << s.zone << " | " << s.region << " | "
          << (s.verdict.ok ? std::string("ok") : "**VIOLATION** " + s.verdict.rule + ": " + s.verdict.detail) << " |\n";
    }
  }
  out << "\n## Chargeback (metered, per tenant)\n\n" << RenderChargebackMarkdown(r.chargeback);
  out << "\n## Showback (estimated cost of placements)\n\n| day | tenant | cluster | placements | cost |\n"
         "| --- | --- | --- | ---: | ---: |\n";
  std::map<std::string, int64_t> totals;
  for (const auto& s : r.showback) {
    out << "| " << s.day << " | " << s.tenant << " | " << s.cluster << " | " << s.placements << " | "
        << MoneyDisplay(s.cost_micros, s.currency) << " |\n";
    totals[s.tenant + "\t" + s.currency] += s.cost_micros;
  }
  out << "\nTotals per tenant (estimates of every placement, requeued ones included; the chargeback above is what "
         "was metered):";
  for (const auto& [key, micros] : totals) {
    size_t tab = key.find('\t');
    out << " " << key.substr(0, tab) << " " << MoneyDisplay(micros, key.substr(tab + 1)) << ";";
  }
  out << "\n";
  return out.str();
}

std::string RenderReportCsv(const ComplianceReport& r) {
  std::string out = "day,tenant,cluster,placements,cost,currency\n";
  for (const auto& s : r.showback) {
    out += s.day + "," + CsvField(s.tenant) + "," + CsvField(s.cluster) + "," + std::to_string(s.placements) + "," +
           Money(s.cost_micros, "").AmountString() + "," + s.currency + "\n";
  }
  return out;
}

nlohmann::json ReportToJson(const ComplianceReport& r) {
  nlohmann::json revisions = nlohmann::json::array();
  for (const auto& rev : r.revisions) {
    auto time_or_null = [](const std::string& t) { return t.empty() ? nlohmann::json(nullptr) : nlohmann::json(t); };
    revisions.push_back({{"revision", rev.id},
                         {"firstSeen", time_or_null(rev.first_seen)},
                         {"lastSeen", time_or_null(rev.last_seen)},
                         {"decisions", rev.decisions},
                         {"activatedInPeriod", rev.activated_in_range}});
  }
  nlohmann::json sensitive = nlohmann::json::array();
  for (const auto& s : r.sensitive) {
    sensitive.push_back({{"seq", s.seq},
                         {"time", s.time},
                         {"workload", s.workload},
                         {"tenant", s.tenant},
                         {"sensitivity", s.sensitivity},
                         {"pii", s.pii},
                         {"residency", s.residency},
                         {"cluster", s.cluster},
                         {"zone", s.zone},
                         {"region", s.region},
                         {"revision", s.revision},
                         {"verdict", s.verdict.ok ? "ok" : "VIOLATION"}});
    if (!s.verdict.ok) sensitive.back()["violation"] = {{"rule", s.verdict.rule}, {"detail", s.verdict.detail}};
  }
  nlohmann::json showback = nlohmann::json::array();
  for (const auto& s : r.showback) {
    showback.push_back({{"day", s.day},
                        {"tenant", s.tenant},
                        {"cluster", s.cluster},
                        {"placements", s.placements},
                        {"cost", MoneyText(s.cost_micros, s.currency)}});
  }
  return {{"from", r.from},
          {"to", r.to},
          {"firstSeq", r.first_seq},
          {"lastSeq", r.last_seq},
          {"outcomes", r.outcomes},
          {"denialsByRule", r.denials_by_rule},
          {"revisions", revisions},
          {"rejectedRevisions", r.rejected_revisions},
          {"sensitive", sensitive},
          {"violations", r.violations},
          {"chargeback", ChargebackToJson(r.chargeback)},
          {"showback", showback}};
}

}  // namespace gpufed::audit
