// gpufed audit query | report: selecting records, and the compliance, chargeback and
// showback report.
#include <iostream>

#include "controller/audit/query.h"
#include "controller/audit/record.h"
#include "controller/audit/report.h"
#include "controller/cli/audit_commands.h"
#include "controller/cli/compliance_rules.h"

namespace gpufed::cli {
namespace {

// Exit status of `audit report` when the compliance section holds a violation: the
// report is written in full, and scripts and CI cannot miss it (3, like a replay that
// found a different decision).
constexpr int kComplianceViolation = 3;
// ... and when no placement broke its rules but some could not be judged, because the
// policy revision that decided them is not available: not a clean bill either.
constexpr int kComplianceNotJudged = 4;

struct QueryOptions {
  std::string audit_dir;
  std::string store;  // --store: the journal in PostgreSQL
  std::vector<std::string> archives;
  audit::QueryFilter filter;
  std::string from, to;
  std::string output = "table";
};

int RunQuery(QueryOptions o) {
  if (Status bounds = audit::SetTimeBounds(o.from, o.to, &o.filter); !bounds.ok()) {
    std::cerr << "gpufed audit query: " << bounds.message() << "\n";
    return 2;
  }
  if (o.store.empty() == o.audit_dir.empty() || (!o.store.empty() && !o.archives.empty())) {
    std::cerr << "gpufed audit query: give --audit-dir (with any --archive) or --store\n";
    return 2;
  }
  std::vector<nlohmann::json> rows;
  std::vector<audit::RecordTime> times;
  auto each = [&](const nlohmann::json& r, const audit::RecordTime& t) {
    if (o.output == "jsonl") {
      std::cout << r.dump() << "\n";  // the record verbatim: its own members only
    } else {
      rows.push_back(r);
      times.push_back(t);
    }
  };
  Status s = Status::Ok();
  if (!o.store.empty()) {
    Result<std::unique_ptr<audit::JournalRecordSource>> source = OpenStoreSource(o.store);
    s = source.ok() ? audit::ScanRecords(**source, o.filter, each) : source.status();
  } else {
    auto env = JournalEnv(o.audit_dir, o.archives);
    s = audit::ScanRecords(*env, o.audit_dir, o.filter, each);
  }
  if (!s.ok()) {
    std::cerr << "gpufed audit query: " << s.ToString() << "\n";
    return 1;
  }
  if (o.output == "table") std::cout << audit::RenderQueryTable(rows, times);
  return 0;
}

struct ReportOptions {
  std::string audit_dir, from, to;
  // --store: the records and the passes' snapshots from PostgreSQL (audit_dir, when given
  // too, for snapshots the database does not hold: journalled before it kept them)
  std::string store;
  std::vector<std::string> archives;
  std::string format = "markdown";
  bool chargeback = false;
  std::string by = "tenant";
  std::vector<std::string> repos;   // --repo: where recorded revisions are now
  std::string pii_zones;            // --pii-zones: removed, refused with why
};

int ReportError(const Status& s) {
  std::cerr << "gpufed audit report: " << s.message() << "\n";
  return s.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

int RunChargeback(const ReportOptions& o) {
  auto env = JournalEnv(o.audit_dir, o.archives);
  const audit::ChargebackGroup by = *audit::ParseChargebackGroup(o.by);
  Result<std::unique_ptr<audit::JournalRecordSource>> source =
      o.store.empty() ? Result<std::unique_ptr<audit::JournalRecordSource>>(nullptr) : OpenStoreSource(o.store);
  if (!source.ok()) return ReportError(source.status());
  Result<audit::Chargeback> c = *source != nullptr ? audit::BuildChargeback(**source, o.from, o.to, by)
                                                   : audit::BuildChargeback(*env, o.audit_dir, o.from, o.to, by);
  if (!c.ok()) return ReportError(c.status());
  if (o.format == "csv") {
    std::cout << audit::RenderChargebackCsv(*c);
  } else if (o.format == "json") {
    std::cout << audit::ChargebackToJson(*c).dump(2) << "\n";
  } else {
    std::cout << "# gpufed chargeback\n\nPeriod: " << (o.from.empty() ? "beginning of the journal" : o.from) << " to "
              << (o.to.empty() ? "its end" : o.to) << ", by " << o.by << ".\n\n"
              << audit::RenderChargebackMarkdown(*c);
  }
  return 0;
}

void ListVerdicts(const audit::ComplianceReport& report, bool violations) {
  for (const audit::ComplianceReport::Sensitive& s : report.sensitive) {
    if (violations ? !s.verdict.violation() : !s.verdict.unknown()) continue;
    std::cerr << "  seq " << s.seq << " " << s.tenant << "/" << s.workload << ": "
              << (violations ? s.verdict.rule + ": " : std::string("unknown: ")) << s.verdict.detail << "\n";
  }
}

int RunReport(const ReportOptions& o) {
  if (o.audit_dir.empty() && o.store.empty()) {
    std::cerr << "gpufed audit report: give --audit-dir, or --store\n";
    return 2;
  }
  if (!o.store.empty() && !o.archives.empty()) {
    std::cerr << "gpufed audit report: --archive goes with a journal folder, not --store\n";
    return 2;
  }
  if (o.chargeback) return RunChargeback(o);
  if (!o.pii_zones.empty()) {
    std::cerr << "gpufed audit report: --pii-zones is gone: each placement is checked against the piiZones of the "
                 "policy revision that decided it (stdlib/compliance-zones); --repo DIR names a checkout of a "
                 "revision that has moved\n";
    return 2;
  }
  auto env = JournalEnv(o.audit_dir, o.archives);
  Result<std::unique_ptr<audit::SnapshotStore>> snapshots = OpenSnapshotStore(env.get(), o.audit_dir, o.store);
  if (!snapshots.ok()) return ReportError(snapshots.status());
  DecisionComplianceRules rules(std::move(*snapshots), o.repos);
  auto rules_for = [&](const nlohmann::json& decision) { return rules.For(decision); };
  Result<std::unique_ptr<audit::JournalRecordSource>> source =
      o.store.empty() ? Result<std::unique_ptr<audit::JournalRecordSource>>(nullptr) : OpenStoreSource(o.store);
  if (!source.ok()) return ReportError(source.status());
  Result<audit::ComplianceReport> report = *source != nullptr
                                               ? audit::BuildReport(**source, o.from, o.to, rules_for)
                                               : audit::BuildReport(*env, o.audit_dir, o.from, o.to, rules_for);
  if (!report.ok()) return ReportError(report.status());
  if (o.format == "csv") {
    std::cout << audit::RenderReportCsv(*report);
  } else if (o.format == "json") {
    std::cout << audit::ReportToJson(*report).dump(2) << "\n";
  } else {
    std::cout << audit::RenderReportMarkdown(*report);
  }
  if (report->violations > 0) {
    std::cerr << "gpufed audit report: COMPLIANCE VIOLATION: " << report->violations
              << " placement(s) of restricted, PII or residency-bound data ran where the data may not go:\n";
    ListVerdicts(*report, true);
  }
  if (report->unknown > 0) {
    std::cerr << "gpufed audit report: NOT JUDGED: " << report->unknown
              << " placement(s) of restricted, PII or residency-bound data, whose policy revision is not "
                 "available (--repo DIR names a checkout of it):\n";
    ListVerdicts(*report, false);
  }
  if (report->violations > 0) return kComplianceViolation;
  return report->unknown > 0 ? kComplianceNotJudged : 0;
}

}  // namespace

void AddAuditQueryCommands(CLI::App& audit, int* exit_code) {
  auto q = std::make_shared<QueryOptions>();
  CLI::App* query =
      audit.add_subcommand("query", "List records by workload, tenant, principal, cluster, outcome, rule, kind, time");
  query->add_option("-d,--audit-dir", q->audit_dir, "Audit folder");
  AddStoreOption(query, &q->store);
  AddArchiveOption(query, &q->archives);
  query->add_option("--workload", q->filter.workload, "Workload name");
  query->add_option("--tenant", q->filter.tenant, "Tenant");
  query->add_option(
      "--principal", q->filter.principal,
      "Who submitted or cancelled: an API token's name, a client certificate's (x509:CN=alice,O=team-nlp), "
      "repository or scenario");
  query->add_option("--cluster", q->filter.cluster, "Target cluster");
  query->add_option("--outcome", q->filter.outcome, "placed, queued or rejected")
      ->check(CLI::IsMember({"placed", "queued", "rejected", "preempted"}));
  query->add_option("--rule", q->filter.rule, "A rule that denied, rejected a cluster or warned");
  // A misspelt kind would list nothing, which reads as "no such records": refused instead.
  query
      ->add_option("--kind", q->filter.kind,
                   "Record kind (decision, workload-submitted, workload-cancelled, connector-action, "
                   "attempt-metered, policy-activated, checkpoint, ...)")
      ->check(CLI::Validator(
          [](const std::string& kind) {
            return audit::ParseRecordKind(kind) ? std::string()
                                                : "no record kind '" + kind + "'; kinds: " + audit::RecordKindNames();
          },
          "KIND"));
  query->add_option("--from", q->from,
                    "From this time (inclusive; date or RFC 3339 UTC, or a simulated run's time since its start: 6h)");
  query->add_option("--to", q->to, "To this time (exclusive)");
  query->add_option("-o,--output", q->output, "Output format")
      ->check(CLI::IsMember({"table", "jsonl"}))
      ->capture_default_str();
  query->callback([q, exit_code] { *exit_code = RunQuery(*q); });

  auto r = std::make_shared<ReportOptions>();
  CLI::App* report = audit.add_subcommand(
      "report",
      "Compliance report with verdicts, chargeback from metered usage, showback (exit 3 on a violation, 4 when "
      "a placement's policy revision is not available)");
  report->add_option("-d,--audit-dir", r->audit_dir,
                     "Audit folder (with --store: where pass snapshots the database lacks are, journalled before "
                     "it kept them)");
  AddStoreOption(report, &r->store, "the journal and the pass snapshots");
  AddArchiveOption(report, &r->archives);
  report->add_option("--from", r->from,
                     "Start (inclusive; date or RFC 3339 UTC, or a simulated run's time since its start: 6h; "
                     "default: the journal's beginning)");
  report->add_option("--to", r->to, "End (exclusive; default: the journal's end)");
  report->add_option("-f,--format", r->format, "Output format")
      ->check(CLI::IsMember({"markdown", "csv", "json"}))
      ->capture_default_str();
  CLI::Option* chargeback =
      report->add_flag("--chargeback", r->chargeback,
                       "Only the chargeback: metered GPU-seconds and cost per group, estimates beside them (CSV: "
                       "group,gpu_seconds,metered,estimated,currency)");
  report->add_option("--by", r->by, "Chargeback groups")
      ->check(CLI::IsMember({"tenant", "cluster", "day"}))
      ->capture_default_str()
      ->needs(chargeback);
  report->add_option("--repo", r->repos,
                     "A checkout of a recorded policy revision that is no longer where the journal says (repeat for "
                     "several revisions; each must hash to the recorded revision)");
  // Kept only to say why it is refused: the zones are each revision's own now.
  report->add_option("--pii-zones", r->pii_zones)->group("");
  report->callback([r, exit_code] { *exit_code = RunReport(*r); });
}

}  // namespace gpufed::cli
