// Loop writes that ride in another's transaction (store.h, RecordIntentsAndUpdatesWith):
// on the shared database a pass's decision rows, intents and updates commit in the
// transaction of the pass's decision records in the journal, so that the records and the
// rows that follow from them are one durable commit (issue 38).
#include <chrono>

#include "controller/store/store.h"

namespace gpufed::store {

Status Store::RecordIntentsAndUpdatesWith(const RidingCommit& commit, const std::vector<DecisionRow>& decisions,
                                          const std::vector<ActionRow>& intents,
                                          const std::vector<WorkloadUpdate>& updates, Duration at) {
  if (read_only_) return FailedPrecondition(kReadOnlyRefusal);
  // Held until the commit's outcome is known and applied: no write of the store's own
  // session, and no read of the mirror, comes between the rows and their commit.
  MutexLock lock(mu_);
  SyncSubmissionsLocked();
  std::vector<WorkloadRecord> written;
  bool ran = false;
  // Run by `commit` on whichever thread commits (the journal's group-commit leader) while
  // this thread holds mu_ and waits for it: the lock is lent for the call, which the
  // analysis cannot follow across threads. The journal's transaction hands nothing back
  // to the store before this returns.
  // Always as if kUndoneByTheWrites: the journal runs a pass's rows once, and reads their
  // replies before its COMMIT (reconcile::JournalDecisionLog's work is not rerunnable).
  RidingWrites writes = [&](Connection& db, RefusedRidingWrite) NO_THREAD_SAFETY_ANALYSIS -> Status {
    if (ran) return FailedPrecondition("the store's writes ride in one commit only");
    ran = true;
    return WriteDecisionsIntentsAndUpdatesLocked(db, decisions, intents, updates, at, &written);
  };
  const auto start = std::chrono::steady_clock::now();
  Status committed = commit(writes);
  if (!ran) return committed;  // nothing was written
  commit_stats_.OnCommit(CommitStats::Writer::kLoop,
                         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  commits_.fetch_add(1, std::memory_order_relaxed);
  if (committed.ok()) {
    unfinished_.Apply(std::move(written));
  } else if (!written.empty()) {
    unfinished_.Forget();  // did the rows commit? The database will say.
  }
  return committed;
}

}  // namespace gpufed::store
