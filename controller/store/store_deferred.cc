// Store writes that wait for the next commit (store.h, "Writes that wait"). The loop
// makes several small writes per placement and per finished attempt; each commit is an
// fsync under synchronous=FULL, and on a week of the Philly trace those commits were
// a third of the replay's wall time.
#include <chrono>
#include <variant>
#include <vector>

#include "controller/store/store.h"

namespace gpufed::store {

// Flush reports its failures as a Status; what could still throw in it (a mutex error, an
// allocation failure) ends the process, as it should in a destructor.
Store::~Store() { (void)Flush(); }  // NOLINT(bugprone-exception-escape)

void Store::DeferLocked(DeferredWrite write) {
  // A read-only store could never commit it (store.h, OpenReadOnly).
  if (read_only_) return;
  deferred_.push_back(std::move(write));
  // Bounded: a loop that only ever defers (an idle controller) still commits.
  if (deferred_.size() > kMaxDeferred) (void)FlushLocked();  // dropped on failure, as documented
}

void Store::MarkActionLater(const std::string& kind, const std::string& key, ActionState state,
                            const std::string& error) {
  MutexLock lock(mu_);
  DeferLocked({DeferredWrite::Mark{kind, key, error, state}});
}

void Store::RecordDecisionLater(const DecisionRow& row) {
  MutexLock lock(mu_);
  DeferLocked({row});
}

Status Store::FinishAttemptLater(const AttemptRow& row) {
  if (row.uid.empty())
    return InvalidArgument("attempt " + std::to_string(row.attempt) + " of " + row.workload + " has no uid");
  if (read_only_) return FailedPrecondition(kReadOnlyRefusal);
  MutexLock lock(mu_);
  DeferLocked({row});
  return Status::Ok();
}

void Store::SetMetaLater(const std::string& key, const std::string& value) {
  MutexLock lock(mu_);
  for (DeferredWrite& d : deferred_) {
    auto* meta = std::get_if<DeferredWrite::Meta>(&d.write);
    if (meta != nullptr && meta->key == key) {
      meta->value = value;
      return;
    }
  }
  DeferLocked({DeferredWrite::Meta{key, value}});
}

void Store::AppendHistoryLater(Duration at, const std::string& sample, Duration keep_from) {
  MutexLock lock(mu_);
  DeferLocked({DeferredWrite::HistorySample{at, sample, keep_from}});
}

Status Store::Flush() {
  MutexLock lock(mu_);
  return FlushLocked();
}

size_t Store::deferred_writes() const {
  MutexLock lock(mu_);
  return deferred_.size();
}

Status Store::ApplyDeferredLocked(Connection& db) {
  std::vector<DecisionRow> decisions;  // a run of waiting decision rows: few INSERTs
  for (size_t i = 0; i < deferred_.size(); ++i) {
    const DeferredWrite& d = deferred_[i];
    Status s;
    if (const auto* m = std::get_if<DeferredWrite::Mark>(&d.write)) {
      s = MarkActionLocked(db, m->kind, m->key, m->state, m->error).status();  // no intent: nothing to mark
    } else if (const auto* row = std::get_if<DecisionRow>(&d.write)) {
      decisions.push_back(*row);
      const bool run_ends = i + 1 == deferred_.size() || !std::holds_alternative<DecisionRow>(deferred_[i + 1].write);
      if (run_ends) {
        s = WriteDecisionsLocked(db, decisions);
        decisions.clear();
      }
    } else if (const auto* attempt = std::get_if<AttemptRow>(&d.write)) {
      s = FinishAttemptLocked(db, *attempt);
    } else if (const auto* meta = std::get_if<DeferredWrite::Meta>(&d.write)) {
      s = SetMetaLocked(db, meta->key, meta->value);
    } else {
      const auto& h = std::get<DeferredWrite::HistorySample>(d.write);
      s = AppendHistoryLocked(db, h.at, h.sample, h.keep_from);
    }
    if (!s.ok()) {
      deferred_.clear();
      return s;
    }
  }
  return Status::Ok();
}

Status Store::CommitRows(Transaction& tx, std::vector<WorkloadRecord> written, CommitStats::Writer writer) {
  const auto start = std::chrono::steady_clock::now();
  Status committed = tx.Commit();
  commit_stats_.OnCommit(writer, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  commits_.fetch_add(1, std::memory_order_relaxed);
  SyncSubmissionsLocked();  // rows committed before these: applied first
  if (committed.ok()) {
    unfinished_.Apply(std::move(written));
  } else if (!written.empty()) {
    unfinished_.Forget();  // did the rows commit? The database will say.
  }
  return committed;
}

Status Store::CommitWithDeferred(Transaction& tx, std::vector<WorkloadRecord> written) {
  Status committed = CommitRows(tx, std::move(written), CommitStats::Writer::kLoop);
  deferred_.clear();
  return committed;
}

Status Store::FlushLocked() {
  if (deferred_.empty()) return Status::Ok();
  Transaction tx(*db_);
  if (!tx.begin_status().ok()) {
    deferred_.clear();
    return tx.begin_status();
  }
  GPUFED_RETURN_IF_ERROR(ApplyDeferredLocked(*db_));
  return CommitWithDeferred(tx);
}

}  // namespace gpufed::store
