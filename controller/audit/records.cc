#include "controller/audit/records.h"

#include <cmath>
#include <map>

#include "controller/audit/inputs.h"
#include "controller/common/qualified_name.h"

namespace gpufed::audit {
AuditRecord DecisionRecord(const placement::Decision& d, const DecisionContext& c) {
  // The decision object (placement/decision_object.h) and what only the journal knows.
  nlohmann::json p = placement::DecisionObject(d, c.kind, c.cluster);
  p["revision"] = c.revision;
  p["inputs"] = c.inputs;
  p["uid"] = c.workload_uid;
  p["specHash"] = c.spec_hash;
  p["decidedAtMillis"] = c.decided_at.millis();
  if (!c.data.is_null()) p["data"] = c.data;
  if (c.budget_left) p["budgetLeft"] = c.budget_left->ToString();
  if (c.cloud_budget_left) p["cloudBudgetLeft"] = c.cloud_budget_left->ToString();
  return {RecordKind::kDecision, std::move(p)};
}

PlanRecordBuilder::PlanRecordBuilder(const placement::Plan& plan, const placement::Snapshot& snapshot,
                                     std::string inputs_digest, std::function<std::string(const model::Workload&)> uid)
    : plan_(plan), snapshot_(snapshot), inputs_digest_(std::move(inputs_digest)), uid_(std::move(uid)) {
  for (const model::Workload* w : snapshot.pending) by_name_[QualifiedName(w->tenant, w->metadata.name)] = w;
}

void PlanRecordBuilder::Rewind() {
  next_ = 0;
  spent_.clear();
}

const model::Tenant* PlanRecordBuilder::Account(const placement::Decision& d) {
  const model::Tenant* tenant = snapshot_.config != nullptr ? snapshot_.config->FindTenant(d.tenant) : nullptr;
  if (tenant == nullptr) return nullptr;
  auto [entry, inserted] = spent_.try_emplace(d.tenant);
  if (inserted) {
    auto u = snapshot_.usage.find(d.tenant);
    entry->second.total = u != snapshot_.usage.end() ? u->second.spent : tenant->budget.spent;
    entry->second.cloud = u != snapshot_.usage.end() ? u->second.cloud_spent : tenant->budget.cloud_spent;
  }
  if (d.outcome == placement::Outcome::kPlaced) {
    const model::Cluster* cluster = snapshot_.config->FindCluster(d.binding.cluster);
    // In the budget's currency, as the placer counted it (the rates are the decision's).
    Result<Money> cost = d.cost.currency() == tenant->budget.Currency()
                             ? Result<Money>(d.cost)
                             : snapshot_.config->Converter().Convert(d.cost, tenant->budget.Currency());
    auto add = [&](Money& total) {
      if (!cost.ok()) return;  // the placer refused such a placement for a budget: none to count
      if (Result<Money> sum = total.Plus(*cost); sum.ok()) total = *sum;
    };
    add(entry->second.total);
    if (cluster != nullptr && !cluster->is_onprem()) add(entry->second.cloud);
  }
  return tenant;
}

AuditRecord PlanRecordBuilder::Build(const placement::Decision& d, const model::Tenant* tenant) {
  DecisionContext c;
  c.revision = plan_.revision.empty() && snapshot_.config != nullptr ? snapshot_.config->revision : plan_.revision;
  c.inputs = inputs_digest_;
  c.decided_at = snapshot_.now;
  auto it = by_name_.find(QualifiedName(d.tenant, d.workload));
  if (it != by_name_.end()) {
    const model::Workload& w = *it->second;
    c.spec_hash = WorkloadSpecHash(w);
    c.workload_uid = uid_ ? uid_(w) : w.metadata.name + "@" + c.spec_hash.substr(7, 12);
    c.data = {{"sensitivity", model::SensitivityName(w.data.sensitivity)},
              {"pii", w.data.pii},
              {"residency", w.data.residency}};
  }
  c.cluster = snapshot_.config != nullptr && d.outcome == placement::Outcome::kPlaced
                  ? snapshot_.config->FindCluster(d.binding.cluster)
                  : nullptr;
  if (tenant != nullptr) {
    const Spend& spend = spent_.at(d.tenant);
    auto left = [](const std::optional<Money>& limit, const Money& spent, std::optional<Money>& out) {
      if (!limit) return;
      if (Result<Money> l = limit->Minus(spent); l.ok()) out = *l;
    };
    left(tenant->budget.limit, spend.total, c.budget_left);
    left(tenant->budget.cloud_limit, spend.cloud, c.cloud_budget_left);
  }
  return DecisionRecord(d, c);
}

std::optional<AuditRecord> PlanRecordBuilder::For(const std::string& tenant, const std::string& workload) {
  for (int pass = 0; pass < 2; ++pass) {
    while (next_ < plan_.decisions.size()) {
      const placement::Decision& d = plan_.decisions[next_++];
      const model::Tenant* spender = Account(d);
      if (d.workload == workload && d.tenant == tenant) return Build(d, spender);
    }
    Rewind();  // asked out of plan order: account again from the start
  }
  return std::nullopt;
}

std::vector<AuditRecord> PlanRecords(const placement::Plan& plan, const placement::Snapshot& snapshot,
                                     const std::string& inputs_digest,
                                     const std::function<std::string(const model::Workload&)>& uid) {
  PlanRecordBuilder builder(plan, snapshot, inputs_digest, uid);
  std::vector<AuditRecord> records;
  records.reserve(plan.decisions.size());
  for (const placement::Decision& d : plan.decisions)
    records.push_back(*builder.For(d.tenant, d.workload));  // in plan order
  return records;
}

AuditRecord PolicyActivatedRecord(const std::string& revision, const std::string& repo, int tests_passed,
                                  const std::map<std::string, int>& removed_with_work) {
  nlohmann::json p = {{"revision", revision}, {"repo", repo}, {"testsPassed", tests_passed}};
  if (!removed_with_work.empty()) {
    nlohmann::json removed = nlohmann::json::array();
    for (const auto& [cluster, attempts] : removed_with_work)
      removed.push_back({{"cluster", cluster}, {"activeAttempts", attempts}});
    p["removedClustersWithWork"] = std::move(removed);
  }
  return {RecordKind::kPolicyActivated, std::move(p)};
}

AuditRecord ClusterConnectorRecord(const ClusterConnectorChange& c) {
  nlohmann::json p = {
      {"cluster", c.cluster}, {"change", c.change}, {"connectorType", c.connector_type}, {"revision", c.revision}};
  if (c.change == "removed") p["activeAttempts"] = c.active_attempts;
  return {RecordKind::kClusterConnector, std::move(p)};
}

AuditRecord PolicyRejectedRecord(const std::string& revision, const std::string& repo,
                                 const std::vector<std::string>& problems) {
  // A record is at most kMaxRecordPayloadBytes (a tlog-tiles entry): the first problems,
  // each cut to 1,000 bytes, and how many more there were.
  constexpr size_t kMaxProblems = 50, kMaxProblemBytes = 1000;
  nlohmann::json listed = nlohmann::json::array();
  for (size_t i = 0; i < problems.size() && i < kMaxProblems; ++i) {
    listed.push_back(problems[i].size() <= kMaxProblemBytes ? problems[i]
                                                            : problems[i].substr(0, kMaxProblemBytes) + "...");
  }
  nlohmann::json p = {{"revision", revision}, {"repo", repo}, {"problems", std::move(listed)}};
  if (problems.size() > kMaxProblems) p["problemsOmitted"] = problems.size() - kMaxProblems;
  return {RecordKind::kPolicyRejected, std::move(p)};
}

AuditRecord ConnectorActionRecord(const ConnectorActionResult& r) {
  nlohmann::json p = {
      {"action", r.action},   {"key", r.key},         {"workload", r.workload},        {"uid", r.workload_uid},
      {"cluster", r.cluster}, {"attempt", r.attempt}, {"decisionSeq", r.decision_seq}, {"ok", r.ok},
      {"status", r.status}};
  if (!r.tenant.empty()) p["tenant"] = r.tenant;
  if (!r.message.empty()) p["message"] = r.message;
  if (!r.external_id.empty()) p["externalId"] = r.external_id;
  return {RecordKind::kConnectorAction, std::move(p)};
}

AuditRecord ControllerStartRecord(const BuildInfo& build, const std::string& state_dir, Durability durability) {
  AuditRecord r{RecordKind::kControllerStart, {{"version", build.version}, {"stateDir", state_dir}}};
  // The commit beside the version (a source tarball's build says "unknown").
  if (build.commit != "unknown") r.payload["commit"] = build.commit;
  // Only the exception is written, so durable runs' records keep their bytes.
  if (durability == Durability::kUnsynced) r.payload["durability"] = "unsynced";
  return r;
}

AuditRecord ControllerStopRecord(const std::string& reason) {
  return {RecordKind::kControllerStop, {{"reason", reason}}};
}

AuditRecord JournalRepairedRecord(uint64_t after_seq, uint64_t bytes, const std::string& quarantine,
                                  uint64_t first_dropped, uint64_t last_dropped) {
  AuditRecord record{
      RecordKind::kJournalRepaired,
      {{"afterSeq", after_seq},
       {"tornBytes", bytes},
       {"quarantine", quarantine},
       {"reason", first_dropped == 0 ? "torn tail: an incomplete last line no append acknowledged"
                                     : "torn commit: records no checkpoint covered, that no append acknowledged"}}};
  if (first_dropped != 0) {
    record.payload["droppedFromSeq"] = first_dropped;
    record.payload["droppedToSeq"] = last_dropped;
  }
  return record;
}

AuditRecord BudgetAlertRecord(const BudgetAlertEvent& a) {
  return {RecordKind::kBudgetAlert,
          {{"tenant", a.tenant},
           {"period", a.period},
           {"scope", a.scope},
           {"level", a.level},
           {"spent", a.spent},
           {"limit", a.limit}}};
}

AuditRecord SinkLagRecord(const SinkLagChange& change) {
  nlohmann::json p = {{"sink", change.sink},
                      {"lagRecords", change.lag_records},
                      {"lagMillis", change.lag_millis},
                      {"acknowledgedSeq", change.acknowledged},
                      {"onLagLimit", change.action}};
  if (change.lagging && !change.last_error.empty()) p["lastError"] = change.last_error;
  return {change.lagging ? RecordKind::kSinkLagging : RecordKind::kSinkRecovered, std::move(p)};
}

AuditRecord PolicyDegradedRecord(const PolicyDegradedEvent& e) {
  return {RecordKind::kPolicyDegraded,
          {{"policy", e.policy},
           {"revision", e.revision},
           {"enforcement", e.enforcement},
           {"calls", e.calls},
           {"errors", e.errors},
           {"errorBudget", e.error_budget},
           {"lastError", e.last_error}}};
}

AuditRecord AttemptMeteredRecord(const MeteredAttempt& a) {
  // GPU-seconds to the millisecond: the shortest text of that double is then its exact
  // decimal ("7200.5"), and a reader sums them as integers.
  const double gpu_seconds = std::isfinite(a.gpu_seconds) ? std::round(a.gpu_seconds * 1000) / 1000 : 0.0;
  return {RecordKind::kAttemptMetered,
          {{"workload", a.workload},
           {"uid", a.uid},
           {"tenant", a.tenant},
           {"cluster", a.cluster},
           {"attempt", a.attempt},
           {"outcome", a.outcome},
           {"gpuSeconds", gpu_seconds},
           {"cost", a.cost.ToString()},
           {"cloud", a.cloud},
           {"startedMillis", a.started.millis()},
           {"finishedMillis", a.finished.millis()},
           {"bookedAtMillis", a.booked_at.millis()}}};
}

AuditRecord WorkloadSubmittedRecord(const WorkloadSubmission& s) {
  nlohmann::json p = {{"workload", s.workload}, {"uid", s.uid},
                      {"tenant", s.tenant},     {"principal", s.principal},
                      {"source", s.source},     {"specHash", s.spec_hash},
                      {"revision", s.revision}, {"acceptedAtMillis", s.accepted_at.millis()}};
  if (!s.commit.empty()) p["commit"] = s.commit;
  return {RecordKind::kWorkloadSubmitted, std::move(p)};
}

AuditRecord WorkloadCancelledRecord(const WorkloadCancellation& c) {
  nlohmann::json p = {{"workload", c.workload},
                      {"uid", c.uid},
                      {"tenant", c.tenant},
                      {"principal", c.principal},
                      {"state", c.state},
                      {"attempt", c.attempt},
                      {"cancelledAtMillis", c.cancelled_at.millis()}};
  if (!c.cluster.empty()) p["cluster"] = c.cluster;
  return {RecordKind::kWorkloadCancelled, std::move(p)};
}

}  // namespace gpufed::audit
