// Writes a signed journal holding at least one record of every kind, each built by the
// builder the controller itself uses (controller/audit/records.h; checkpoints by the
// journal), with every optional member a builder can add set at least once. The schema
// test (journal_schema_test.sh) validates it against schemas/audit/: a `gpufed run`
// writes only the kinds its run calls for, this writes all of them.
// Usage: audit_sample_journal AUDIT_DIR (a folder that does not hold a journal yet).
#include <exception>
#include <iostream>
#include <vector>

#include "controller/audit/journal.h"
#include "controller/audit/key_in_force.h"
#include "controller/audit/records.h"
#include "controller/audit/signing.h"
#include "controller/model/cluster.h"

namespace gpufed {
namespace {

placement::Decision Placed() {
  placement::Decision d;
  d.workload = "train";
  d.tenant = "team-nlp";
  d.priority = 500;
  d.outcome = placement::Outcome::kPlaced;
  d.binding = {"eu-cloud", "h100", {"h100-0"}, {{0, 1}}, 1000, "", -1, true, Duration::FromMillis(90000)};
  d.cost = Money(int64_t{168} * 1000000, "EUR");
  d.reason = "placed on eu-cloud";
  d.warnings = {"fleet-hygiene: uncheckpointed-long-training-onprem"};
  placement::ClusterVerdict chosen;
  chosen.cluster = "eu-cloud";
  chosen.eligible = true;
  chosen.fits_now = true;
  chosen.cost = d.cost;
  chosen.score = {0.5, 1, 0.25, 0, 0, 1.75};
  chosen.warnings = d.warnings;
  placement::ClusterVerdict denied;
  denied.cluster = "us-cloud";
  denied.rule = "pii-in-eu";
  denied.reason = "cluster.zone us not in [eu]";
  d.verdicts = {chosen, denied};
  d.verdict_groups = {{"hardware", "no A100-80GB", 70, {"a-1", "a-2"}}};
  d.preempted = {{"sweep", "team-vision", 100, "eu-cloud", {"h100-0"}, 8000, true, Duration::FromMillis(600000), ""}};
  d.exchange_rates = {{"USD", "EUR", "0.92", "2026-11-02", "rates"}};
  return d;
}

audit::AuditRecord PlacedRecord(const model::Cluster& cluster) {
  audit::DecisionContext c;
  c.revision = "3f2a9c1+sha256:0123456789abcdef";
  c.inputs = "sha256:" + std::string(64, 'a');
  c.workload_uid = "train-u1";
  c.spec_hash = "sha256:" + std::string(64, 'b');
  c.decided_at = Duration::FromMillis(3600000);
  c.data = {{"sensitivity", "confidential"}, {"pii", true}, {"residency", {"eu"}}};
  c.budget_left = Money(-12500000, "EUR");
  c.cloud_budget_left = Money(400000000, "EUR");
  c.cluster = &cluster;
  audit::AuditRecord r = audit::DecisionRecord(Placed(), c);
  r.payload["attempt"] = 1;  // as the loop adds it
  return r;
}

std::vector<audit::AuditRecord> Decisions(const model::Cluster& cluster) {
  std::vector<audit::AuditRecord> records = {PlacedRecord(cluster)};
  placement::Decision rejected;
  rejected.workload = "huge";
  rejected.tenant = "team-nlp";
  rejected.outcome = placement::Outcome::kRejected;
  rejected.reason = "no cluster allows it";
  rejected.denied_by = {"restricted-stays-onprem"};
  audit::DecisionContext c;
  c.revision = "sha256:" + std::string(64, 'c');
  records.push_back(audit::DecisionRecord(rejected, c));
  // A preempted victim's record, as the loop writes it: no inputs, the beneficiary named.
  placement::Decision victim = Placed();
  victim.workload = "sweep";
  victim.preempted.clear();
  audit::DecisionContext v;
  v.revision = c.revision;
  v.kind = placement::DecisionKind::kPreempt;
  v.cluster = &cluster;
  audit::AuditRecord r = audit::DecisionRecord(victim, v);
  r.payload["uid"] = "sweep-u3";
  r.payload["attempt"] = 2;
  r.payload["beneficiary"] = "train";
  records.push_back(std::move(r));
  return records;
}

std::vector<audit::AuditRecord> Others() {
  std::vector<audit::AuditRecord> records;
  BuildInfo build;
  build.version = "0.9.0";
  build.commit = "3f2a9c1d";
  records.push_back(audit::ControllerStartRecord(build, "/var/lib/gpufed", Durability::kUnsynced));
  records.push_back(audit::ControllerStartRecord(BuildInfo{}, "/var/lib/gpufed"));
  records.push_back(
      audit::PolicyActivatedRecord("sha256:" + std::string(64, 'c'), "/srv/policies", 12, {{"porto", 2}}));
  records.push_back(audit::PolicyActivatedRecord("sha256:" + std::string(64, 'd'), "/srv/policies", 0));
  std::vector<std::string> problems(60, "policies.yaml:3:1: error: spec: unknown field");
  problems[0] = std::string(1500, 'x');
  records.push_back(audit::PolicyRejectedRecord("sha256:" + std::string(64, 'e'), "/srv/policies", problems));
  for (const char* change : {"added", "removed"}) {
    records.push_back(audit::ClusterConnectorRecord({"porto", change, "slurm", "sha256:" + std::string(64, 'c'), 2}));
  }
  audit::ConnectorActionResult action{"submit", "train-u1.a1", "train", "train-u1", "team-nlp", "eu-cloud", 1,
                                      1,        true,          "OK",    "",         "job-42"};
  records.push_back(audit::ConnectorActionRecord(action));
  action = {"cancel", "train-u1.a1", "train", "", "", "eu-cloud", 1, 0, false, "UNAVAILABLE", "timed out", ""};
  records.push_back(audit::ConnectorActionRecord(action));
  records.push_back(audit::JournalRepairedRecord(41, 517, "quarantine/00000000000000000042.torn"));
  records.push_back(audit::JournalRepairedRecord(41, 517, "quarantine/00000000000000000042.torn", 42, 44));
  records.push_back(audit::BudgetAlertRecord({"team-render", "2026-11", "cloud", 0.8, "250.00 EUR", "300.00 EUR"}));
  records.push_back(audit::SinkLagRecord({"soc-syslog", true, 1200, 45000, 880, "pause", "connection refused"}));
  records.push_back(audit::SinkLagRecord({"soc-syslog", false, 3, 120, 2077, "pause", ""}));
  records.push_back(audit::PolicyDegradedRecord(
      {"team-rules", "sha256:" + std::string(64, 'c'), "deny", 40, 7, 0.01, "team-rules: rules/x.lua:3: boom"}));
  audit::MeteredAttempt metered;
  metered.workload = "train";
  metered.uid = "train-u1";
  metered.tenant = "team-nlp";
  metered.cluster = "eu-cloud";
  metered.outcome = "preempted";
  metered.gpu_seconds = 7200.5004;
  metered.cost = Money(4400000, "EUR");
  metered.cloud = true;
  metered.started = Duration::FromMillis(3600000);
  metered.finished = Duration::FromMillis(7200000);
  metered.booked_at = Duration::FromMillis(7201000);
  records.push_back(audit::AttemptMeteredRecord(metered));
  metered.cost = Money();  // a cluster that never reported the attempt
  metered.outcome = "lost";
  records.push_back(audit::AttemptMeteredRecord(metered));
  audit::WorkloadSubmission submitted{"train",
                                      "train-u1",
                                      "team-nlp",
                                      "alice",
                                      "api",
                                      "sha256:" + std::string(64, 'b'),
                                      "3f2a9c1+sha256:0123456789abcdef",
                                      "3f2a9c1d",
                                      Duration::FromMillis(1000)};
  records.push_back(audit::WorkloadSubmittedRecord(submitted));
  submitted.commit.clear();
  submitted.principal = submitted.source = "repository";
  records.push_back(audit::WorkloadSubmittedRecord(submitted));
  records.push_back(audit::WorkloadCancelledRecord(
      {"train", "train-u1", "team-nlp", "bob", "running", 1, "eu-cloud", Duration::FromMillis(5000)}));
  records.push_back(audit::WorkloadCancelledRecord(
      {"train", "train-u2", "team-nlp", "bob", "queued", 1, "", Duration::FromMillis(6000)}));
  return records;
}

int Run(const std::string& dir) {
  Result<audit::Signer> signer = audit::Signer::Generate();
  if (!signer.ok()) {
    std::cerr << "audit_sample_journal: " << signer.status().ToString() << "\n";
    return 1;
  }
  std::unique_ptr<audit::Env> env = audit::NewPosixEnv();
  audit::JournalOptions o;
  o.env = env.get();
  o.dir = dir;
  o.controller_id = "sample-ctl";
  o.signer = &*signer;
  auto journal = audit::AuditJournal::Open(o);
  if (!journal.ok()) {
    std::cerr << "audit_sample_journal: " << journal.status().ToString() << "\n";
    return 1;
  }
  model::Cluster cluster;
  cluster.metadata.name = "eu-cloud";
  cluster.provider = "ionos";
  cluster.region = "eu-central";
  cluster.zone = "eu";
  std::vector<audit::AuditRecord> records = Others();
  for (audit::AuditRecord& r : Decisions(cluster)) records.push_back(std::move(r));
  {
    // A key rotation's record (the rotation itself, with its two checkpoints, is
    // gpufed audit rotate-key's; here only the record's shape matters).
    const audit::Signer old_key = audit::Signer::Generate().value();
    const audit::Signer new_key = audit::Signer::Generate().value();
    records.push_back(audit::KeyRotatedRecord(old_key, new_key, "gpufed/gpufed", "ops-alice", "yearly rotation"));
  }
  records.push_back(audit::ControllerStopRecord("until-idle: nothing left to do"));
  // One record per commit, so each is followed by a checkpoint (sign-ahead).
  for (const audit::AuditRecord& r : records) {
    Result<uint64_t> seq = (*journal)->Append(r);
    if (!seq.ok()) {
      std::cerr << "audit_sample_journal: " << audit::RecordKindName(r.kind) << ": " << seq.status().ToString() << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace gpufed

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: audit_sample_journal AUDIT_DIR\n";
    return 2;
  }
  try {
    return gpufed::Run(argv[1]);
  } catch (const std::exception& e) {  // a test tool: say what went wrong rather than abort
    std::cerr << "audit_sample_journal: " << e.what() << "\n";
    return 1;
  }
}
