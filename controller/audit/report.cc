#include "controller/audit/report.h"

#include <algorithm>
#include <functional>
#include <sstream>
#include <tuple>

#include "controller/audit/query.h"
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

// Exact (JSON) and for people (tables).
std::string MoneyText(int64_t micros, const std::string& currency) { return Money(micros, currency).ToString(); }
std::string MoneyDisplay(int64_t micros, const std::string& currency) {
  return Money(micros, currency).ToDisplayString();
}

// What a report keeps while it reads the period's records.
class ReportBuilder {
 public:
  ReportBuilder(ComplianceReport* report, const ComplianceRulesFor& rules_for)
      : report_(*report), rules_for_(rules_for) {}

  void Add(const nlohmann::json& r, const RecordTime& at) {
    const uint64_t seq = Seq(r);
    if (report_.first_seq == 0) report_.first_seq = seq;
    report_.last_seq = seq;
    chargeback_.Add(r, at);
    const std::string kind = Str(r, "kind");
    if (kind == "policy-rejected") {
      report_.rejected_revisions.push_back(Str(r, "revision"));
    } else if (kind == "policy-activated") {
      // The columns are the revision's decisions' times: an activation carries the wall
      // clock, which in a simulated run is not the run's time.
      RevisionOf(Str(r, "revision")).activated_in_range = true;
    } else if (kind == "decision") {
      AddDecision(r, at);
    }
  }

  void Finish() {
    for (auto& [key, row] : showback_) report_.showback.push_back(row);
    report_.chargeback = chargeback_.Finish();
  }

 private:
  ComplianceReport::Revision& RevisionOf(const std::string& id) {
    auto [it, inserted] = revision_index_.try_emplace(id, report_.revisions.size());
    if (inserted) report_.revisions.push_back({id, "", "", 0, false});
    return report_.revisions[it->second];
  }

  void AddDecision(const nlohmann::json& r, const RecordTime& at) {
    const std::string outcome = Str(r, "outcome"), revision = Str(r, "revision");
    report_.outcomes[outcome]++;
    ComplianceReport::Revision& rev = RevisionOf(revision);
    if (rev.first_seen.empty()) rev.first_seen = at.text;
    rev.decisions++;
    rev.last_seen = at.text;
    for (const std::string& rule : Strings(r, "deniedBy")) report_.denials_by_rule[rule]++;
    if (outcome != "placed") return;
    const Result<ComplianceRules> rules = rules_for_(r);
    if (rules.ok()) {
      rev.rules = rules->Describe();
      rev.rules_unavailable.clear();
    } else if (rev.rules.empty()) {
      rev.rules_unavailable = rules.status().message();
    }
    const nlohmann::json& target = Object(r, "target");
    if (IsSensitivePlacement(r, rules)) {
      const nlohmann::json& data = Object(r, "data");
      ComplianceVerdict verdict = CheckPlacement(r, rules);
      if (verdict.violation()) ++report_.violations;
      if (verdict.unknown()) ++report_.unknown;
      report_.sensitive.push_back({Seq(r), at.text, Str(r, "workload"), Str(r, "tenant"), Str(data, "sensitivity"),
                                   Join(Strings(data, "residency"), " "), Str(target, "cluster"), Str(target, "zone"),
                                   Str(target, "region"), revision, Bool(data, "pii"), std::move(verdict)});
    }
    Result<Money> cost = Money::Parse(Str(r, "cost"));
    const std::string currency = cost.ok() ? cost->currency() : "";
    auto key = std::make_tuple(at.day, Str(r, "tenant"), Str(target, "cluster"), currency);
    ComplianceReport::Showback& row = showback_[key];
    row.day = at.day;
    row.tenant = std::get<1>(key);
    row.cluster = std::get<2>(key);
    row.currency = currency;
    row.placements++;
    if (cost.ok()) row.cost_micros += cost->micros();
  }

  ComplianceReport& report_;
  const ComplianceRulesFor& rules_for_;
  ChargebackBuilder chargeback_{ChargebackGroup::kTenant};
  std::map<std::tuple<std::string, std::string, std::string, std::string>, ComplianceReport::Showback> showback_;
  std::map<std::string, size_t> revision_index_;
};

// The verdict as a table cell: "ok", "**VIOLATION** rule: detail", "unknown: why".
std::string VerdictCell(const ComplianceVerdict& v) {
  if (v.violation()) return "**VIOLATION** " + v.rule + ": " + v.detail;
  if (v.unknown()) return "unknown: " + v.detail;
  return "ok";
}

// The checks that applied, then those its data called for that its revision does not
// enforce.
std::string ChecksCell(const ComplianceVerdict& v) {
  std::string out = Join(v.checked, ", ");
  if (!v.not_applicable.empty()) out += "; not applicable: " + Join(v.not_applicable, "; ");
  return out;
}

// First, before anything else: a violation only comes from a bug or a forged record, and
// a placement that could not be judged is not a clean bill.
void RenderAlerts(const ComplianceReport& r, std::ostream& out) {
  if (r.violations > 0) {
    out << "> **COMPLIANCE VIOLATION: " << r.violations << " placement" << (r.violations == 1 ? "" : "s")
        << " of restricted, PII or residency-bound data ran where the data may not go.**\n";
    for (const auto& v : r.sensitive) {
      if (!v.verdict.violation()) continue;
      out << "> - seq " << v.seq << " " << v.time << ": " << v.tenant << "/" << v.workload << ": **VIOLATION** "
          << v.verdict.rule << ": " << v.verdict.detail << " (revision `" << v.revision << "`)\n";
    }
    out << "\n";
  }
  if (r.unknown > 0) {
    out << "> **NOT JUDGED: " << r.unknown << " placement" << (r.unknown == 1 ? "" : "s")
        << " of restricted, PII or residency-bound data could not be checked against the policy revision that "
           "decided "
        << (r.unknown == 1 ? "it" : "them")
        << "** (`gpufed audit report --repo DIR` names a checkout of a revision that has moved):\n";
    std::vector<std::string> reasons;  // each once, in the order met
    for (const auto& s : r.sensitive) {
      if (s.verdict.unknown() && std::find(reasons.begin(), reasons.end(), s.verdict.detail) == reasons.end())
        reasons.push_back(s.verdict.detail);
    }
    for (const std::string& why : reasons) out << "> - " << why << "\n";
    out << "\n";
  }
}

void RenderRevisions(const ComplianceReport& r, std::ostream& out) {
  out << "\n## Policy revisions in force\n\n| revision | first decision | last decision | decisions | activated in "
         "period | compliance checks |\n"
         "| --- | --- | --- | ---: | --- | --- |\n";
  for (const auto& rev : r.revisions) {
    const std::string checks = !rev.rules.empty()               ? rev.rules
                               : !rev.rules_unavailable.empty() ? "unknown: " + rev.rules_unavailable
                                                                : "-";
    out << "| `" << rev.id << "` | " << (rev.first_seen.empty() ? "-" : rev.first_seen) << " | "
        << (rev.last_seen.empty() ? "-" : rev.last_seen) << " | " << rev.decisions << " | "
        << (rev.activated_in_range ? "yes" : "no") << " | " << checks << " |\n";
  }
  if (!r.rejected_revisions.empty()) {
    out << "\nRejected revisions (never active):";
    for (const std::string& id : r.rejected_revisions) out << " `" << id << "`";
    out << "\n";
  }
}

void RenderSensitive(const ComplianceReport& r, std::ostream& out) {
  out << "\n## Restricted, PII and residency-bound workloads\n\n";
  if (r.sensitive.empty()) {
    out << "None placed in this period.\n";
    return;
  }
  const std::string n = std::to_string(r.sensitive.size());
  if (r.violations == 0 && r.unknown == 0) {
    out << "Compliance: all " << n << " placements ok, each checked against the policy revision that decided it.\n\n";
  } else {
    out << "Compliance: ";
    if (r.violations > 0) {
      out << "**" << r.violations << " VIOLATION" << (r.violations == 1 ? "" : "S") << "**"
          << (r.unknown > 0 ? ", " : "");
    }
    if (r.unknown > 0) out << "**" << r.unknown << " NOT JUDGED** (revision not available)";
    out << " in " << n << " placements.\n\n";
  }
  out << "| seq | time | workload | tenant | sensitivity | PII | residency | cluster | zone | region | checks | "
         "verdict "
         "|\n"
         "| ---: | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& s : r.sensitive) {
    out << "| " << s.seq << " | " << s.time << " | " << s.workload << " | " << s.tenant << " | " << s.sensitivity
        << " | " << (s.pii ? "yes" : "no") << " | " << (s.residency.empty() ? "-" : s.residency) << " | " << s.cluster
        << " | " << s.zone << " | " << s.region << " | " << ChecksCell(s.verdict) << " | " << VerdictCell(s.verdict)
        << " |\n";
  }
}

void RenderShowback(const ComplianceReport& r, std::ostream& out) {
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
}

// Every record from..to through `scan` (the file journal's, or a source's ScanRecords).
using RecordScan =
    std::function<Status(const QueryFilter&, const std::function<void(const nlohmann::json&, const RecordTime&)>&)>;

Result<Chargeback> ChargebackOver(const RecordScan& scan, const std::string& from, const std::string& to,
                                  ChargebackGroup by) {
  QueryFilter filter;
  GPUFED_RETURN_IF_ERROR(SetTimeBounds(from, to, &filter));
  ChargebackBuilder builder(by);
  GPUFED_RETURN_IF_ERROR(scan(filter, [&](const nlohmann::json& r, const RecordTime& time) { builder.Add(r, time); }));
  return builder.Finish();
}

Result<ComplianceReport> ReportOver(const RecordScan& scan, const std::string& from, const std::string& to,
                                    const ComplianceRulesFor& rules_for) {
  QueryFilter filter;
  GPUFED_RETURN_IF_ERROR(SetTimeBounds(from, to, &filter));
  ComplianceReport report;
  report.from = from;
  report.to = to;
  ReportBuilder builder(&report, rules_for);
  GPUFED_RETURN_IF_ERROR(scan(filter, [&](const nlohmann::json& r, const RecordTime& at) { builder.Add(r, at); }));
  builder.Finish();
  return report;
}

RecordScan FileScan(Env& env, const std::string& audit_dir) {
  return
      [&env, &audit_dir](const QueryFilter& filter, const auto& fn) { return ScanRecords(env, audit_dir, filter, fn); };
}

RecordScan SourceScan(JournalRecordSource& source) {
  return [&source](const QueryFilter& filter, const auto& fn) { return ScanRecords(source, filter, fn); };
}

}  // namespace

Result<Chargeback> BuildChargeback(Env& env, const std::string& audit_dir, const std::string& from,
                                   const std::string& to, ChargebackGroup by) {
  return ChargebackOver(FileScan(env, audit_dir), from, to, by);
}

Result<Chargeback> BuildChargeback(JournalRecordSource& source, const std::string& from, const std::string& to,
                                   ChargebackGroup by) {
  return ChargebackOver(SourceScan(source), from, to, by);
}

Result<ComplianceReport> BuildReport(Env& env, const std::string& audit_dir, const std::string& from,
                                     const std::string& to, const ComplianceRulesFor& rules_for) {
  return ReportOver(FileScan(env, audit_dir), from, to, rules_for);
}

Result<ComplianceReport> BuildReport(JournalRecordSource& source, const std::string& from, const std::string& to,
                                     const ComplianceRulesFor& rules_for) {
  return ReportOver(SourceScan(source), from, to, rules_for);
}

std::string RenderReportMarkdown(const ComplianceReport& r) {
  std::ostringstream out;
  out << "# gpufed audit report\n\n";
  RenderAlerts(r, out);
  out << "Period: " << (r.from.empty() ? "beginning of the journal" : r.from) << " to "
      << (r.to.empty() ? "its end" : r.to) << " (UTC or virtual run time, end exclusive). Records seq " << r.first_seq
      << "-" << r.last_seq << ".\n\n";
  out << "## Decisions\n\n| outcome | count |\n| --- | ---: |\n";
  for (const auto& [outcome, n] : r.outcomes) out << "| " << outcome << " | " << n << " |\n";
  out << "\n## Denials by rule\n\n";
  if (r.denials_by_rule.empty()) {
    out << "None.\n";
  } else {
    out << "| rule | workloads denied |\n| --- | ---: |\n";
    for (const auto& [rule, n] : r.denials_by_rule) out << "| " << rule << " | " << n << " |\n";
  }
  RenderRevisions(r, out);
  RenderSensitive(r, out);
  out << "\n## Chargeback (metered, per tenant)\n\n" << RenderChargebackMarkdown(r.chargeback);
  RenderShowback(r, out);
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
  auto text_or_null = [](const std::string& t) { return t.empty() ? nlohmann::json(nullptr) : nlohmann::json(t); };
  nlohmann::json revisions = nlohmann::json::array();
  for (const auto& rev : r.revisions) {
    revisions.push_back({{"revision", rev.id},
                         {"firstSeen", text_or_null(rev.first_seen)},
                         {"lastSeen", text_or_null(rev.last_seen)},
                         {"decisions", rev.decisions},
                         {"activatedInPeriod", rev.activated_in_range},
                         {"complianceChecks", text_or_null(rev.rules)}});
    if (!rev.rules_unavailable.empty() && rev.rules.empty()) revisions.back()["unavailable"] = rev.rules_unavailable;
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
                         {"checks", s.verdict.checked},
                         {"notApplicable", s.verdict.not_applicable},
                         {"verdict", VerdictName(s.verdict)}});
    if (s.verdict.violation()) sensitive.back()["violation"] = {{"rule", s.verdict.rule}, {"detail", s.verdict.detail}};
    if (s.verdict.unknown()) sensitive.back()["unknown"] = {{"reason", s.verdict.detail}};
  }
  nlohmann::json showback = nlohmann::json::array();
  for (const auto& s : r.showback) {
    showback.push_back({{"day", s.day},
                        {"tenant", s.tenant},
                        {"cluster", s.cluster},
                        {"placements", s.placements},
                        {"cost", MoneyText(s.cost_micros, s.currency)}});
  }
  return {{"from", r.from},          {"to", r.to},
          {"firstSeq", r.first_seq}, {"lastSeq", r.last_seq},
          {"outcomes", r.outcomes},  {"denialsByRule", r.denials_by_rule},
          {"revisions", revisions},  {"rejectedRevisions", r.rejected_revisions},
          {"sensitive", sensitive},  {"violations", r.violations},
          {"unknown", r.unknown},    {"chargeback", ChargebackToJson(r.chargeback)},
          {"showback", showback}};
}

}  // namespace gpufed::audit
