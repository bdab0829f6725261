// Store: the dashboard's history samples (migration 5).
#include "controller/store/store.h"

namespace gpufed::store {

Status Store::AppendHistory(Duration at, const std::string& sample, Duration keep_from) {
  MutexLock lock(mu_);
  Transaction tx(*db_);
  GPUFED_RETURN_IF_ERROR(tx.begin_status());
  GPUFED_RETURN_IF_ERROR(ApplyDeferredLocked(*db_));
  GPUFED_RETURN_IF_ERROR(AppendHistoryLocked(*db_, at, sample, keep_from));
  return CommitWithDeferred(tx);
}

Status Store::AppendHistoryLocked(Connection& db, Duration at, const std::string& sample, Duration keep_from) {
  Result<std::unique_ptr<Statement>> insert = db.Prepare(
      "INSERT INTO history(at_ms, sample) VALUES($1,$2) ON CONFLICT(at_ms) DO UPDATE SET sample=excluded.sample");
  if (!insert.ok()) return insert.status();
  (*insert)->Bind(1, at.millis()).Bind(2, sample);
  GPUFED_RETURN_IF_ERROR((*insert)->Run());
  Result<std::unique_ptr<Statement>> prune = db.Prepare("DELETE FROM history WHERE at_ms < $1");
  if (!prune.ok()) return prune.status();
  (*prune)->Bind(1, keep_from.millis());
  return (*prune)->Run();
}

Result<std::vector<std::pair<Duration, std::string>>> Store::ReadHistory(Duration since) {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(FlushLockedIfWaiting<DeferredWrite::HistorySample>());
  Result<std::unique_ptr<Statement>> s =
      db_->Prepare("SELECT at_ms, sample FROM history WHERE at_ms >= $1 ORDER BY at_ms");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, since.millis());
  std::vector<std::pair<Duration, std::string>> out;
  while (true) {
    Result<bool> row = (*s)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.emplace_back(Duration::FromMillis((*s)->Int(0)), (*s)->Text(1));
  }
  return out;
}

}  // namespace gpufed::store
