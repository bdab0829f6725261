#pragma once
// The audit journal (controller/audit) behind the DecisionLog interface: the loop's
// tamper-evident write-ahead log. Each planner pass stores its inputs as a snapshot
// (for replay); each decision is appended, durable, before the loop acts on it; each
// connector action's result is appended after it.
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "connectors/core/connector.h"
#include "controller/audit/inputs.h"
#include "controller/audit/journal.h"
#include "controller/audit/records.h"
#include "controller/audit/signing.h"
#include "controller/audit/snapshot_store.h"
#include "controller/audit/snapshot_writer.h"
#include "controller/common/mutex.h"
#include "controller/reconcile/decision_log.h"
#include "controller/reconcile/store_writes_in_journal.h"

namespace gpufed::reconcile {

class JournalDecisionLog : public DecisionLog {
 public:
  // `journal` and `snapshots` (the audit trail's: files beside the journal, or the
  // database's table under --store) must outlive this. `repo_root` is recorded in
  // snapshots so replay can load the revision again.
  // `in_journal`: how the loop's store writes ride in the journal's transaction
  // (RecordAllWith), or null when they cannot.
  JournalDecisionLog(audit::AuditJournal* journal, audit::SnapshotStore* snapshots, std::string repo_root,
                     StoreWritesInJournal in_journal = nullptr);

  // Remembers the pass; its snapshot is stored when the pass records its first placement
  // decision (a pass whose decisions are all unchanged writes none). `plan` and
  // `snapshot` must stay alive until the pass's last Record.
  Status BeginPass(const placement::Plan& plan, const placement::Snapshot& snapshot) override;
  void EndPass() override;
  Status Record(const placement::Decision& decision, const DecisionContext& ctx) override;
  Status RecordAll(const std::vector<LoggedDecision>& decisions) override;  // one AppendBatch
  // With `in_journal` and a journal that carries work (a PostgreSQL table): the store's
  // writes run in the transaction of the decisions' records, as the writer `loop`.
  bool carries_store_writes() const override;
  Status RecordAllWith(const std::vector<LoggedDecision>& decisions, const store::RidingWrites& writes) override;
  // Appends the results of connector actions (one batch), each linked to the decision it
  // carries out.
  void RecordActions(const std::vector<ActionResult>& results);
  // Appends `attempt-metered` once per (uid, attempt) in this process (one batch): a
  // booking the store failed after the append is retried by the next pass without a
  // second record. (A crash between the append and the booking can still leave two
  // across a restart; readers count the first, docs/audit-format.md.)
  Status RecordMetered(const std::vector<store::AttemptRow>& attempts, Duration booked_at) override;

  // OK while decisions can be recorded: the journal's sticky health, or the last
  // snapshot write's failure (a decision without its inputs cannot be replayed).
  // Thread-safe: /readyz reads it while a pass runs.
  Status health() const EXCLUDES(health_mu_);

 private:
  // Stores the pass's snapshot and prepares its decision records (records_).
  Status PreparePass();
  // The journal records of `decisions` (RecordAll's); then, once appended, their seqs
  // noted for the action results that follow.
  Status DecisionRecords(const std::vector<LoggedDecision>& decisions, std::vector<audit::AuditRecord>* records);
  void NoteDecisionSeqs(const std::vector<LoggedDecision>& decisions, const std::vector<uint64_t>& seqs);

  audit::AuditJournal* journal_;
  StoreWritesInJournal in_journal_;
  const placement::Plan* pass_plan_ = nullptr;          // a pass begun and not yet prepared
  const placement::Snapshot* pass_snapshot_ = nullptr;
  audit::SnapshotWriter snapshot_writer_;
  std::string repo_root_;
  mutable Mutex health_mu_;
  Status snapshot_status_ GUARDED_BY(health_mu_);
  std::optional<audit::PlanRecordBuilder> records_;      // this pass's records, once prepared
  std::map<std::string, uint64_t> decision_seq_;        // action key "<uid>.a<attempt>" -> seq
  // Action keys whose attempt-metered is durable: a booking the store failed is retried
  // within a pass or two, so the newest kMeteredKept keys are enough (bounded memory on
  // a controller that runs for months).
  static constexpr size_t kMeteredKept = 4096;
  std::set<std::string> metered_;
  std::deque<std::string> metered_order_;  // oldest first
};

}  // namespace gpufed::reconcile
