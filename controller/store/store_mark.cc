// Store: where the append-only tables end (a mark), and what was written after one.
// `gpufed run`'s summary covers its own process: the booked attempts and the transitions
// after the mark taken when the process opened its store, the same span its journal's
// controller-start and controller-stop records enclose.
#include "controller/common/action_key.h"
#include "controller/store/store.h"

namespace gpufed::store {

Result<StoreMark> Store::Mark() {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(FlushLockedIfWaiting<AttemptRow>());
  // MAX over an INTEGER PRIMARY KEY and over rowid are each one B-tree step. Two
  // statements, one per table: attempts' rowid is SQLite's and PostgreSQL's DDL gives
  // it a column of that name (README.md, "Portable SQL"); nothing writes between them,
  // the Store being its database's only writer and holding its lock.
  StoreMark mark;
  for (auto [sql, out] : {std::pair{"SELECT COALESCE(MAX(id), 0) FROM status_history", &mark.transition_id},
                          std::pair{"SELECT COALESCE(MAX(rowid), 0) FROM attempts", &mark.attempt_rowid}}) {
    Result<std::unique_ptr<Statement>> s = db_->Prepare(sql);
    if (!s.ok()) return s.status();
    Result<bool> row = (*s)->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Internal("store mark: no row");
    *out = (*s)->Int(0);
  }
  return mark;
}

Result<std::vector<AttemptRow>> Store::AttemptsAfter(const StoreMark& mark) {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(FlushLockedIfWaiting<AttemptRow>());
  Result<std::unique_ptr<Statement>> s = db_->Prepare(
      "SELECT workload, attempt, tenant, cluster, outcome, gpu_seconds, cost_micros, currency, cloud, started_ms, "
      "finished_ms, uid FROM attempts WHERE rowid > $1 ORDER BY rowid");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, mark.attempt_rowid);
  std::vector<AttemptRow> out;
  while (true) {
    Result<bool> row = (*s)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const Statement& q = **s;
    out.push_back({q.Text(0), static_cast<int>(q.Int(1)), q.Text(2), q.Text(3), q.Text(4), q.Real(5),
                   Money(q.Int(6), q.Text(7)), q.Int(8) != 0, Duration::FromMillis(q.Int(9)),
                   Duration::FromMillis(q.Int(10)), q.Text(11)});
  }
  return out;
}

Result<TransitionsAfterMark> Store::TransitionsAfter(const StoreMark& mark) {
  MutexLock lock(mu_);
  TransitionsAfterMark out;
  // Both read the primary key's range after the mark: the span's rows, not the history.
  Result<std::unique_ptr<Statement>> counts =
      db_->Prepare("SELECT to_state, COUNT(*) FROM status_history WHERE id > $1 GROUP BY to_state");
  if (!counts.ok()) return counts.status();
  (*counts)->Bind(1, mark.transition_id);
  while (true) {
    Result<bool> row = (*counts)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.entered[(*counts)->Text(0)] = (*counts)->Int(1);
  }
  Result<std::unique_ptr<Statement>> running = db_->Prepare(
      "SELECT workload, attempt, MAX(at_ms) FROM status_history WHERE id > $1 AND to_state = $2 "
      "GROUP BY workload, attempt");
  if (!running.ok()) return running.status();
  (*running)->Bind(1, mark.transition_id).Bind(2, std::string(StateName(WorkloadState::kRunning)));
  while (true) {
    Result<bool> row = (*running)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const Statement& q = **running;
    out.running_since[ActionKey(q.Text(0), static_cast<int>(q.Int(1)))] = Duration::FromMillis(q.Int(2));
  }
  return out;
}

}  // namespace gpufed::store
