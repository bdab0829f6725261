// gpufed audit query | report: selecting records and the compliance/showback report.
#include <iostream>

#include "controller/audit/query.h"
#include "controller/audit/record.h"
#include "controller/cli/audit_commands.h"

namespace gpufed::cli {
namespace {

struct QueryOptions {
  std::string audit_dir;
  audit::QueryFilter filter;
  std::string from, to;
  std::string output = "table";
};

int RunQuery(QueryOptions o) {
  if (!o.from.empty()) o.filter.from_micros = audit::ParseTimeMicros(o.from);
  if (!o.to.empty()) o.filter.to_micros = audit::ParseTimeMicros(o.to);
  if ((!o.from.empty() && !o.filter.from_micros) || (!o.to.empty() && !o.filter.to_micros)) {
    std::cerr << "gpufed audit query: --from/--to take a date (2026-11-01) or RFC 3339 UTC (2026-11-01T10:00:00Z)\n";
    return 2;
  }
  auto env = audit::NewPosixEnv();
  std::vector<nlohmann::json> rows;
  Status s = audit::ScanRecords(*env, o.audit_dir, o.filter, [&](const nlohmann::json& r) {
    if (o.output == "jsonl") {
      std::cout << r.dump() << "\n";
    } else {
      rows.push_back(r);
    }
  });
  if (!s.ok()) {
    std::cerr << "gpufed audit query: " << s.ToString() << "\n";
    return 1;
  }
  if (o.output == "table") std::cout << audit::RenderQueryTable(rows);
  return 0;
}

struct ReportOptions {
  std::string audit_dir, from, to;
  std::string format = "markdown";
};

int RunReport(const ReportOptions& o) {
  auto env = audit::NewPosixEnv();
  Result<audit::ComplianceReport> report = audit::BuildReport(*env, o.audit_dir, o.from, o.to);
  if (!report.ok()) {
    std::cerr << "gpufed audit report: " << report.status().message() << "\n";
    return report.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  if (o.format == "csv") {
    std::cout << audit::RenderReportCsv(*report);
  } else if (o.format == "json") {
    std::cout << audit::ReportToJson(*report).dump(2) << "\n";
  } else {
    std::cout << audit::RenderReportMarkdown(*report);
  }
  return 0;
}

}  // namespace

void AddAuditQueryCommands(CLI::App& audit, int* exit_code) {
  auto q = std::make_shared<QueryOptions>();
  CLI::App* query = audit.add_subcommand("query", "List records by workload, tenant, cluster, outcome, rule, kind, time");
  query->add_option("-d,--audit-dir", q->audit_dir, "Audit folder")->required();
  query->add_option("--workload", q->filter.workload, "Workload name");
  query->add_option("--tenant", q->filter.tenant, "Tenant");
  query->add_option("--cluster", q->filter.cluster, "Target cluster");
  query->add_option("--outcome", q->filter.outcome, "placed, queued or rejected")
      ->check(CLI::IsMember({"placed", "queued", "rejected", "preempted"}));
  query->add_option("--rule", q->filter.rule, "A rule that denied, rejected a cluster or warned");
  query->add_option("--kind", q->filter.kind, "Record kind (decision, policy-activated, checkpoint, ...)");
  query->add_option("--from", q->from, "From this time (inclusive; date or RFC 3339 UTC)");
  query->add_option("--to", q->to, "To this time (exclusive)");
  query->add_option("-o,--output", q->output, "Output format")
      ->check(CLI::IsMember({"table", "jsonl"}))
      ->capture_default_str();
  query->callback([q, exit_code] { *exit_code = RunQuery(*q); });

  auto r = std::make_shared<ReportOptions>();
  CLI::App* report = audit.add_subcommand("report", "Compliance report and showback per tenant, cluster and day");
  report->add_option("-d,--audit-dir", r->audit_dir, "Audit folder")->required();
  report->add_option("--from", r->from, "Start (inclusive; date or RFC 3339 UTC)")->required();
  report->add_option("--to", r->to, "End (exclusive)")->required();
  report->add_option("-f,--format", r->format, "Output format")
      ->check(CLI::IsMember({"markdown", "csv", "json"}))
      ->capture_default_str();
  report->callback([r, exit_code] { *exit_code = RunReport(*r); });
}

}  // namespace gpufed::cli
