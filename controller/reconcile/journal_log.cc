#include "controller/reconcile/journal_log.h"

#include <algorithm>

#include "controller/audit/records.h"
#include "controller/common/action_key.h"

namespace gpufed::reconcile {

JournalDecisionLog::JournalDecisionLog(audit::AuditJournal* journal, audit::SnapshotStore* snapshots,
                                       std::string repo_root, StoreWritesInJournal in_journal)
    : journal_(journal),
      in_journal_(std::move(in_journal)),
      snapshot_writer_(snapshots),
      repo_root_(std::move(repo_root)) {}

Status JournalDecisionLog::BeginPass(const placement::Plan& plan, const placement::Snapshot& snapshot) {
  records_.reset();
  pass_plan_ = &plan;
  pass_snapshot_ = &snapshot;
  return Status::Ok();
}

void JournalDecisionLog::EndPass() {
  records_.reset();
  pass_plan_ = nullptr;
  pass_snapshot_ = nullptr;
}

Status JournalDecisionLog::PreparePass() {
  Result<std::string> digest = snapshot_writer_.Write(*pass_snapshot_, repo_root_);
  {
    MutexLock lock(health_mu_);
    snapshot_status_ = digest.status();
  }
  if (!digest.ok()) return digest.status();
  // The builder carries what only the whole pass knows (budget left after earlier
  // decisions, compliance facts) into the records the loop actually logs.
  records_.emplace(*pass_plan_, *pass_snapshot_, *digest);
  pass_plan_ = nullptr;
  pass_snapshot_ = nullptr;
  return Status::Ok();
}

Status JournalDecisionLog::Record(const placement::Decision& d, const DecisionContext& ctx) {
  return RecordAll({LoggedDecision{&d, ctx}});
}

Status JournalDecisionLog::DecisionRecords(const std::vector<LoggedDecision>& decisions,
                                           std::vector<audit::AuditRecord>* records) {
  records->reserve(decisions.size());
  for (const LoggedDecision& logged : decisions) {
    const placement::Decision& d = *logged.decision;
    const DecisionContext& ctx = logged.ctx;
    if (ctx.kind == placement::DecisionKind::kPlace && pass_plan_ != nullptr) GPUFED_RETURN_IF_ERROR(PreparePass());
    std::optional<audit::AuditRecord> planned;
    if (ctx.kind == placement::DecisionKind::kPlace && records_) planned = records_->For(d.tenant, d.workload);
    audit::AuditRecord record;
    if (planned) {
      record = std::move(*planned);
    } else {
      audit::DecisionContext c;
      c.revision = ctx.revision;
      c.decided_at = ctx.at;
      c.kind = ctx.kind;
      c.cluster = ctx.cluster;
      record = audit::DecisionRecord(d, c);
    }
    if (!ctx.uid.empty()) record.payload["uid"] = ctx.uid;
    record.payload["attempt"] = ctx.attempt;
    // The victim is the record's workload; auditors see whom it made room for.
    if (ctx.kind == placement::DecisionKind::kPreempt) record.payload["beneficiary"] = ctx.beneficiary;
    records->push_back(std::move(record));
  }
  return Status::Ok();
}

void JournalDecisionLog::NoteDecisionSeqs(const std::vector<LoggedDecision>& decisions,
                                          const std::vector<uint64_t>& seqs) {
  // Keyed like the actions they are linked to: by uid and attempt (names repeat across tenants).
  for (size_t i = 0; i < decisions.size() && i < seqs.size(); ++i) {
    const DecisionContext& ctx = decisions[i].ctx;
    if (!ctx.uid.empty()) decision_seq_[ActionKey(ctx.uid, ctx.attempt)] = seqs[i];
  }
}

Status JournalDecisionLog::RecordAll(const std::vector<LoggedDecision>& decisions) {
  if (decisions.empty()) return Status::Ok();
  std::vector<audit::AuditRecord> records;
  GPUFED_RETURN_IF_ERROR(DecisionRecords(decisions, &records));
  std::vector<uint64_t> seqs;
  Result<uint64_t> last = journal_->AppendBatch(records, &seqs);
  if (!last.ok()) return last.status();
  NoteDecisionSeqs(decisions, seqs);
  return Status::Ok();
}

bool JournalDecisionLog::carries_store_writes() const { return in_journal_ != nullptr && journal_->carries_work(); }

Status JournalDecisionLog::RecordAllWith(const std::vector<LoggedDecision>& decisions,
                                         const store::RidingWrites& writes) {
  if (!carries_store_writes()) return DecisionLog::RecordAllWith(decisions, writes);
  std::vector<audit::AuditRecord> records;
  GPUFED_RETURN_IF_ERROR(DecisionRecords(decisions, &records));
  if (records.empty()) return FailedPrecondition("the store's writes ride only with decision records");
  audit::RidingWork rows{.run = [&](audit::CommitScope& scope) { return in_journal_(scope, "loop", writes); }};
  std::vector<uint64_t> seqs;
  Result<uint64_t> last = journal_->AppendBatch(records, &seqs, &rows);
  if (!last.ok()) return last.status();
  NoteDecisionSeqs(decisions, seqs);
  return rows.result;  // the rows' own error: the records committed, the rows did not
}

void JournalDecisionLog::RecordActions(const std::vector<ActionResult>& results) {
  if (results.empty()) return;
  std::vector<audit::AuditRecord> records;
  records.reserve(results.size());
  for (const ActionResult& result : results) {
    audit::ConnectorActionResult r;
    r.action = connectors::ActionKindName(result.action.kind);
    r.key = result.action.key;
    r.workload = result.action.workload;
    r.workload_uid = result.uid;
    r.tenant = result.action.tenant;
    r.cluster = result.cluster;
    r.attempt = result.action.attempt;
    auto it = decision_seq_.find(result.action.key);
    if (it != decision_seq_.end()) r.decision_seq = it->second;
    r.ok = result.status.ok();
    r.status = StatusCodeName(result.status.code());
    r.message = result.status.message();
    records.push_back(audit::ConnectorActionRecord(r));
  }
  // A failed append leaves the journal failed; health() reports it and the loop stops
  // placing, so the error needs no other path from here.
  (void)journal_->AppendBatch(records);
}

Status JournalDecisionLog::RecordMetered(const std::vector<store::AttemptRow>& attempts, Duration booked_at) {
  std::vector<audit::AuditRecord> records;
  std::vector<std::string> keys;
  for (const store::AttemptRow& a : attempts) {
    std::string key = ActionKey(a.uid, a.attempt);
    if (metered_.count(key) > 0 || std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    audit::MeteredAttempt m;
    m.workload = a.workload;
    m.uid = a.uid;
    m.tenant = a.tenant;
    m.cluster = a.cluster;
    m.attempt = a.attempt;
    m.outcome = a.outcome;
    m.gpu_seconds = a.gpu_seconds;
    m.cost = a.cost;
    m.cloud = a.cloud;
    m.started = a.started;
    m.finished = a.finished;
    m.booked_at = booked_at;
    records.push_back(audit::AttemptMeteredRecord(m));
    keys.push_back(std::move(key));
  }
  if (records.empty()) return Status::Ok();
  Result<uint64_t> seq = journal_->AppendBatch(records);
  if (!seq.ok()) return seq.status();
  for (std::string& key : keys) {
    metered_.insert(key);
    metered_order_.push_back(std::move(key));
  }
  while (metered_order_.size() > kMeteredKept) {
    metered_.erase(metered_order_.front());
    metered_order_.pop_front();
  }
  return Status::Ok();
}

Status JournalDecisionLog::health() const {
  Status s = journal_->health();
  if (!s.ok()) return s;
  MutexLock lock(health_mu_);
  return snapshot_status_;
}

}  // namespace gpufed::reconcile
