#include "controller/audit/query.h"

#include <algorithm>
#include <sstream>
#include <tuple>

#include "controller/audit/reader.h"
#include "controller/audit/record.h"
#include "controller/common/money.h"

namespace gpufed::audit {
namespace {

std::string Str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// A journal's records are evidence, but one with a valid chain may still be forged or come
// from a newer writer: every member is read by type, and a member of the wrong type reads
// as absent (never a json type_error out of a report).
bool Bool(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

uint64_t Seq(const nlohmann::json& r) {
  auto it = r.find("seq");
  return it != r.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

// The string elements of an array member (others skipped).
std::vector<std::string> Strings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const nlohmann::json& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

// An object member, or an empty object.
const nlohmann::json& Object(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : kEmpty;
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

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string MoneyText(int64_t micros, const std::string& currency) {
  return Money(micros, currency).ToString();
}

std::optional<int64_t> ParseBound(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return ParseTimeMicros(text);
}

}  // namespace

bool MatchesFilter(const nlohmann::json& r, const QueryFilter& f) {
  if (!f.kind.empty() && Str(r, "kind") != f.kind) return false;
  if (!f.workload.empty() && Str(r, "workload") != f.workload) return false;
  if (!f.tenant.empty() && Str(r, "tenant") != f.tenant) return false;
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

Status ScanRecords(Env& env, const std::string& audit_dir, const QueryFilter& filter,
                   const std::function<void(const nlohmann::json&)>& fn) {
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
      if (MatchesFilter(*j, filter)) fn(*j);
    }
  }
}

std::string RenderQueryTable(const std::vector<nlohmann::json>& records) {
  std::vector<std::vector<std::string>> rows = {
      {"SEQ", "TIME", "KIND", "WORKLOAD", "TENANT", "OUTCOME", "CLUSTER", "COST", "REASON"}};
  for (const nlohmann::json& r : records) {
    std::string reason = Str(r, "reason");
    if (reason.empty()) {
      const std::vector<std::string> problems = Strings(r, "problems");
      if (!problems.empty()) reason = problems.front();
    }
    if (reason.empty()) reason = Str(r, "revision");
    if (reason.size() > 80) reason = reason.substr(0, 77) + "...";
    rows.push_back({std::to_string(Seq(r)), Str(r, "time"), Str(r, "kind"), Str(r, "workload"),
                    Str(r, "tenant"), Str(r, "outcome"), ClusterOf(r), Str(r, "cost"), reason});
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

Result<ComplianceReport> BuildReport(Env& env, const std::string& audit_dir, const std::string& from,
                                     const std::string& to) {
  QueryFilter filter;
  filter.from_micros = ParseBound(from);
  filter.to_micros = ParseBound(to);
  if ((!from.empty() && !filter.from_micros) || (!to.empty() && !filter.to_micros)) {
    return InvalidArgument("--from/--to take a date (2026-11-01) or an RFC 3339 UTC time (2026-11-01T00:00:00Z)");
  }
  ComplianceReport report;
  report.from = from;
  report.to = to;
  std::map<std::tuple<std::string, std::string, std::string, std::string>, ComplianceReport::Showback> showback;
  std::map<std::string, size_t> revision_index;
  Status s = ScanRecords(env, audit_dir, filter, [&](const nlohmann::json& r) {
    uint64_t seq = Seq(r);
    if (report.first_seq == 0) report.first_seq = seq;
    report.last_seq = seq;
    std::string kind = Str(r, "kind");
    std::string time = Str(r, "time");
    if (kind == "policy-activated" || kind == "policy-rejected") {
      std::string id = Str(r, "revision");
      if (kind == "policy-rejected") {
        report.rejected_revisions.push_back(id);
        return;
      }
      auto [it, inserted] = revision_index.try_emplace(id, report.revisions.size());
      if (inserted) report.revisions.push_back({id, time, time, 0, true});
      report.revisions[it->second].activated_in_range = true;
      return;
    }
    if (kind != "decision") return;
    std::string outcome = Str(r, "outcome");
    report.outcomes[outcome]++;
    std::string revision = Str(r, "revision");
    auto [it, inserted] = revision_index.try_emplace(revision, report.revisions.size());
    if (inserted) report.revisions.push_back({revision, time, time, 0, false});
    report.revisions[it->second].decisions++;
    report.revisions[it->second].last_seen = time;
    for (const std::string& rule : Strings(r, "deniedBy")) report.denials_by_rule[rule]++;
    if (outcome != "placed") return;
    const nlohmann::json& target = Object(r, "target");
    const nlohmann::json& data = Object(r, "data");
    std::string sensitivity = Str(data, "sensitivity");
    bool pii = Bool(data, "pii");
    std::string residency;
    for (const std::string& zone : Strings(data, "residency")) residency += (residency.empty() ? "" : " ") + zone;
    if (sensitivity == "restricted" || pii || !residency.empty()) {
      report.sensitive.push_back({seq, time, Str(r, "workload"), Str(r, "tenant"), sensitivity, residency,
                                  Str(target, "cluster"), Str(target, "zone"), Str(target, "region"), revision, pii});
    }
    Result<Money> cost = Money::Parse(Str(r, "cost"));
    std::string day = time.substr(0, 10);
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
  return report;
}

std::string RenderReportMarkdown(const ComplianceReport& r) {
  std::ostringstream out;
  out << "# gpufed audit report\n\n";
  out << "Period: " << (r.from.empty() ? "beginning" : r.from) << " to " << (r.to.empty() ? "now" : r.to)
      << " (UTC, end exclusive). Records seq " << r.first_seq << "-" << r.last_seq << ".\n\n";
  out << "## Decisions\n\n| outcome | count |\n| --- | ---: |\n";
  for (const auto& [outcome, n] : r.outcomes) out << "| " << outcome << " | " << n << " |\n";
  out << "\n## Denials by rule\n\n";
  if (r.denials_by_rule.empty()) out << "None.\n";
  else {
    out << "| rule | workloads denied |\n| --- | ---: |\n";
    for (const auto& [rule, n] : r.denials_by_rule) out << "| " << rule << " | " << n << " |\n";
  }
  out << "\n## Policy revisions in force\n\n| revision | first decision | last decision | decisions | activated in period |\n"
         "| --- | --- | --- | ---: | --- |\n";
  for (const auto& rev : r.revisions) {
    out << "| `" << rev.id << "` | " << rev.first_seen << " | " << rev.last_seen << " | " << rev.decisions << " | "
        << (rev.activated_in_range ? "yes" : "no") << " |\n";
  }
  if (!r.rejected_revisions.empty()) {
    out << "\nRejected revisions (never active):";
    for (const std::string& id : r.rejected_revisions) out << " `" << id << "`";
    out << "\n";
  }
  out << "\n## Restricted, PII and residency-bound workloads\n\n";
  if (r.sensitive.empty()) out << "None placed in this period.\n";
  else {
    out << "| seq | time | workload | tenant | sensitivity | PII | residency | cluster | zone | region |\n"
           "| ---: | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const auto& s : r.sensitive) {
      out << "| " << s.seq << " | " << s.time << " | " << s.workload << " | " << s.tenant << " | " << s.sensitivity
          << " | " << (s.pii ? "yes" : "no") << " | " << (s.residency.empty() ? "-" : s.residency) << " | "
          << s.cluster << " | " << s.zone << " | " << s.region << " |\n";
    }
  }
  out << "\n## Showback (estimated cost of placements)\n\n| day | tenant | cluster | placements | cost |\n"
         "| --- | --- | --- | ---: | ---: |\n";
  std::map<std::string, int64_t> totals;
  for (const auto& s : r.showback) {
    out << "| " << s.day << " | " << s.tenant << " | " << s.cluster << " | " << s.placements << " | "
        << MoneyText(s.cost_micros, s.currency) << " |\n";
    totals[s.tenant + "\t" + s.currency] += s.cost_micros;
  }
  out << "\nTotals per tenant:";
  for (const auto& [key, micros] : totals) {
    size_t tab = key.find('\t');
    out << " " << key.substr(0, tab) << " " << MoneyText(micros, key.substr(tab + 1)) << ";";
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
    revisions.push_back({{"revision", rev.id}, {"firstSeen", rev.first_seen}, {"lastSeen", rev.last_seen},
                         {"decisions", rev.decisions}, {"activatedInPeriod", rev.activated_in_range}});
  }
  nlohmann::json sensitive = nlohmann::json::array();
  for (const auto& s : r.sensitive) {
    sensitive.push_back({{"seq", s.seq}, {"time", s.time}, {"workload", s.workload}, {"tenant", s.tenant},
                         {"sensitivity", s.sensitivity}, {"pii", s.pii}, {"residency", s.residency},
                         {"cluster", s.cluster}, {"zone", s.zone}, {"region", s.region}, {"revision", s.revision}});
  }
  nlohmann::json showback = nlohmann::json::array();
  for (const auto& s : r.showback) {
    showback.push_back({{"day", s.day}, {"tenant", s.tenant}, {"cluster", s.cluster}, {"placements", s.placements},
                        {"cost", MoneyText(s.cost_micros, s.currency)}});
  }
  return {{"from", r.from}, {"to", r.to}, {"firstSeq", r.first_seq}, {"lastSeq", r.last_seq},
          {"outcomes", r.outcomes}, {"denialsByRule", r.denials_by_rule}, {"revisions", revisions},
          {"rejectedRevisions", r.rejected_revisions}, {"sensitive", sensitive}, {"showback", showback}};
}

}  // namespace gpufed::audit
