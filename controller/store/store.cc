#include "controller/store/store.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_map>

#include "controller/store/insert_batches.h"
#include "controller/store/schema.h"
#include "controller/store/sqlite.h"
#include "controller/store/workload_columns.h"

namespace gpufed::store {
namespace {

// Keep in step with IsTerminal (records.cc) and the partial indexes of migrations 3 and 4.
const char* kUnfinished = "state NOT IN ('Succeeded', 'Failed', 'Rejected', 'Cancelled')";

WorkloadRecord ReadWorkload(const Statement& s) {
  WorkloadRecord r;
  r.name = s.Text(0);
  r.uid = s.Text(1);
  r.tenant = s.Text(2);
  r.source = s.Text(3);
  r.spec_text = s.Text(4);
  r.submitted = Duration::FromMillis(s.Int(5));
  Result<WorkloadState> state = ParseState(s.Text(6));
  r.state = state.ok() ? *state : WorkloadState::kPending;
  r.reason = s.Text(7);
  r.attempt = static_cast<int>(s.Int(8));
  r.cluster = s.Text(9);
  r.binding_json = s.Text(10);
  r.resume_from = Duration::FromMillis(s.Int(11));
  r.progress = Duration::FromMillis(s.Int(12));
  r.checkpoint = Duration::FromMillis(s.Int(13));
  r.started = Duration::FromMillis(s.Int(14) < 0 ? 0 : s.Int(14));
  r.finished = Duration::FromMillis(s.Int(15) < 0 ? 0 : s.Int(15));
  r.estimate = Money(s.Int(16), s.Text(18));
  r.cost = Money(s.Int(17), s.Text(18));
  r.gpu_milli = s.Int(19);
  r.cloud = s.Int(20) != 0;
  r.cancel_requested = s.Int(21) != 0;
  r.decision_signature = s.Text(22);
  r.updated_seq = s.Int(23);
  return r;
}

}  // namespace

int Store::LatestSchemaVersion() { return kLatestSchemaVersion; }

int Store::schema_version() const {
  MutexLock lock(mu_);
  return version_;
}

Result<std::unique_ptr<Store>> Store::Open(const std::string& path, Durability durability) {
  Result<std::unique_ptr<Database>> db = Database::Open(path, durability);
  if (!db.ok()) return db.status();
  return OpenOn(std::move(db).value());
}

Result<std::unique_ptr<Store>> Store::OpenReadOnly(const std::string& path) {
  Result<std::unique_ptr<Database>> db = Database::OpenReadOnly(path);
  if (!db.ok()) return db.status();
  return OpenOn(std::move(db).value());
}

Result<std::unique_ptr<Store>> Store::OpenOn(std::unique_ptr<Connection> db, std::unique_ptr<Connection> submissions) {
  if (submissions != nullptr &&
      (submissions->read_only() || db->read_only() || submissions->dialect() != db->dialect())) {
    return InvalidArgument("store: the submissions' session must be a writable one of the store's own database");
  }
  std::unique_ptr<Store> store(new Store(std::move(db), std::move(submissions)));
  if (!store->read_only_) {
    GPUFED_RETURN_IF_ERROR(store->Migrate());
    return store;
  }
  MutexLock lock(store->mu_);
  GPUFED_RETURN_IF_ERROR(store->ReadVersionLocked());
  const int latest = LatestSchemaVersion();
  // A migration writes, and would leave the store unreadable to the gpufed that wrote it.
  if (store->version_ < latest) {
    return FailedPrecondition("store schema version " + std::to_string(store->version_) +
                              " is older than this gpufed's (" + std::to_string(latest) +
                              ") and a read-only open does not migrate it: use the gpufed "
                              "that wrote it, or run `gpufed run` once with this one (which migrates the store)");
  }
  if (store->version_ > latest) {
    return FailedPrecondition("store schema version " + std::to_string(store->version_) +
                              " is newer than this gpufed's (" + std::to_string(latest) +
                              "): use the gpufed that wrote it");
  }
  GPUFED_RETURN_IF_ERROR(store->ReadSeqLocked());
  return store;
}

Status Store::ReadVersionLocked() {
  Result<int> version = db_->SchemaVersion();
  if (!version.ok()) return Status(StatusCode::kDataLoss, "not a gpufed store: " + version.status().message());
  version_ = *version;
  return Status::Ok();
}

Status Store::ReadSeqLocked() {
  Result<std::unique_ptr<Statement>> m = db_->Prepare("SELECT COALESCE(MAX(seq), 0) FROM workloads");
  if (!m.ok()) return m.status();
  Result<bool> r = (*m)->Step();
  if (!r.ok()) return r.status();
  seq_.store((*m)->Int(0));
  return Status::Ok();
}

Status Store::Migrate() {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(ReadVersionLocked());
  if (version_ > LatestSchemaVersion()) {
    return FailedPrecondition("store schema version " + std::to_string(version_) + " is newer than this gpufed (" +
                              std::to_string(LatestSchemaVersion()) + ")");
  }
  const std::vector<const char*>& migrations = SchemaMigrations(db_->dialect());
  if (static_cast<int>(migrations.size()) != LatestSchemaVersion()) {
    return FailedPrecondition("this gpufed has no schema for the store's database engine yet");
  }
  if (version_ < LatestSchemaVersion()) {
    GPUFED_RETURN_IF_ERROR(db_->Migrate(migrations));
    // Re-read: another replica may have migrated (PostgreSQL), and the version is what
    // the database holds, not what this process meant to write.
    GPUFED_RETURN_IF_ERROR(ReadVersionLocked());
  }
  return ReadSeqLocked();
}

Result<std::optional<WorkloadRecord>> Store::GetOne(const std::string& where, const std::string& first,
                                                    const std::string& second) {
  Result<std::unique_ptr<Statement>> s =
      db_->Prepare(std::string("SELECT ") + kWorkloadColumns + " FROM workloads WHERE " + where);
  if (!s.ok()) return s.status();
  (*s)->Bind(1, first);
  if (!second.empty()) (*s)->Bind(2, second);
  Result<bool> row = (*s)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<WorkloadRecord>();
  return std::optional<WorkloadRecord>(ReadWorkload(**s));
}

Result<std::optional<WorkloadRecord>> Store::GetLocked(const std::string& tenant, const std::string& name) {
  return GetOne("tenant=$1 AND name=$2 ORDER BY seq DESC LIMIT 1", tenant, name);
}

Status Store::Submit(const WorkloadRecord& record, Duration at) {
  MutexLock lock(mu_);
  Transaction tx(*db_);
  GPUFED_RETURN_IF_ERROR(tx.begin_status());
  GPUFED_RETURN_IF_ERROR(ApplyDeferredLocked(*db_));
  std::vector<WorkloadRecord> written;
  GPUFED_RETURN_IF_ERROR(SubmitLocked(record, at, &written));
  return CommitWithDeferred(tx, std::move(written));
}

Status Store::SubmitLocked(const WorkloadRecord& record, Duration at, std::vector<WorkloadRecord>* written) {
  // Only the same tenant's rows are looked at: another tenant's name is never in the way,
  // and its existence is never revealed.
  Result<std::optional<WorkloadRecord>> existing = GetLocked(record.tenant, record.name);
  if (!existing.ok()) return existing.status();
  if (*existing && !IsTerminal((*existing)->state)) {
    return {StatusCode::kAlreadyExists, "workload " + record.name + " exists (" + StateName((*existing)->state) + ")"};
  }
  return InsertSubmission(*db_, record, at, written);
}

Result<std::optional<WorkloadRecord>> Store::Get(const std::string& tenant, const std::string& name) {
  MutexLock lock(mu_);
  return GetLocked(tenant, name);
}

Result<std::optional<WorkloadRecord>> Store::GetByUid(const std::string& uid) {
  MutexLock lock(mu_);
  return GetOne("uid=$1", uid, "");
}

Result<std::vector<WorkloadRecord>> Store::FindByName(const std::string& name) {
  Result<std::vector<WorkloadRecord>> all = Query(" WHERE name=$1", name);
  if (!all.ok()) return all.status();
  // Newest per tenant (rows come by seq, so a later row replaces an earlier one).
  std::map<std::string, WorkloadRecord> newest;
  for (WorkloadRecord& r : *all) newest[r.tenant] = std::move(r);
  std::vector<WorkloadRecord> out;
  out.reserve(newest.size());
  for (auto& [tenant, r] : newest) out.push_back(std::move(r));
  return out;
}

Result<std::vector<WorkloadRecord>> Store::List(const std::string& tenant) {
  return Query(tenant.empty() ? "" : " WHERE tenant=$1", tenant);
}

Status Store::LoadUnfinishedLocked() {
  SyncSubmissionsLocked();
  if (unfinished_.loaded()) return Status::Ok();
  // SQLite reads these through the partial index workloads_unfinished, whose WHERE is
  // kUnfinished (store_sql_test checks the plan; INDEXED BY, which forced it, is SQLite's).
  Result<std::vector<WorkloadRecord>> rows = QueryLocked(std::string(" WHERE ") + kUnfinished, "");
  if (!rows.ok()) return rows.status();
  unfinished_.Load(*rows);
  return Status::Ok();
}

Result<std::vector<WorkloadRecord>> Store::ListUnfinished() {
  std::vector<WorkloadRecord> out;
  GPUFED_RETURN_IF_ERROR(ListUnfinishedInto(&out));
  return out;
}

Status Store::ListUnfinishedInto(std::vector<WorkloadRecord>* out) {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(LoadUnfinishedLocked());
  unfinished_.ListInto(out);
  rows_read_.fetch_add(static_cast<int64_t>(out->size()), std::memory_order_relaxed);
  return Status::Ok();
}

Result<std::vector<WorkloadRecord>> Store::Query(const std::string& where, const std::string& bind) {
  MutexLock lock(mu_);
  Result<std::vector<WorkloadRecord>> out = QueryLocked(where, bind);
  if (out.ok()) rows_read_.fetch_add(static_cast<int64_t>(out->size()), std::memory_order_relaxed);
  return out;
}

Result<std::vector<WorkloadRecord>> Store::QueryLocked(const std::string& where, const std::string& bind) {
  Result<std::unique_ptr<Statement>> s =
      db_->Prepare(std::string("SELECT ") + kWorkloadColumns + " FROM workloads" + where + " ORDER BY seq");
  if (!s.ok()) return s.status();
  if (!bind.empty()) (*s)->Bind(1, bind);
  std::vector<WorkloadRecord> out;
  while (true) {
    Result<bool> row = (*s)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(ReadWorkload(**s));
  }
  return out;
}

Result<std::map<std::string, ActiveEstimate>> Store::ActiveEstimates() {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(LoadUnfinishedLocked());
  return unfinished_.ActiveEstimates();
}

Result<std::vector<StateCount>> Store::CountByState() {
  MutexLock lock(mu_);
  // The totals come from the trigger-kept state_totals (a row per tenant, state,
  // currency and writing session, summed); the oldest submission of unfinished work from
  // the mirror.
  GPUFED_RETURN_IF_ERROR(LoadUnfinishedLocked());
  const std::map<std::pair<std::string, std::string>, int64_t> oldest_ms = unfinished_.OldestSubmitted();
  Result<std::unique_ptr<Statement>> s = db_->Prepare(
      "SELECT tenant, state, SUM(workloads), SUM(cost_micros), currency, SUM(gpu_milli) FROM state_totals "
      "GROUP BY tenant, state, currency HAVING SUM(workloads) > 0 ORDER BY tenant, state, currency");
  if (!s.ok()) return s.status();
  std::vector<StateCount> out;
  while (true) {
    Result<bool> row = (*s)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    Result<WorkloadState> state = ParseState((*s)->Text(1));
    if (!state.ok()) continue;
    auto first = oldest_ms.find({(*s)->Text(0), (*s)->Text(1)});
    out.push_back({(*s)->Text(0), *state, (*s)->Int(2), Money((*s)->Int(3), (*s)->Text(4)), (*s)->Int(5),
                   Duration::FromMillis(first == oldest_ms.end() ? 0 : first->second)});
  }
  return out;
}

Status Store::Update(const WorkloadRecord& record, const std::string& reason, Duration at) {
  MutexLock lock(mu_);
  Transaction tx(*db_);
  GPUFED_RETURN_IF_ERROR(tx.begin_status());
  GPUFED_RETURN_IF_ERROR(ApplyDeferredLocked(*db_));
  std::vector<WorkloadRecord> written;
  GPUFED_RETURN_IF_ERROR(WriteDecisionsIntentsAndUpdatesLocked(*db_, {}, {}, {{record, reason, at}}, at, &written));
  return CommitWithDeferred(tx, std::move(written));
}

Status Store::RecordIntentAndUpdate(const ActionRow& row, const WorkloadRecord& record, const std::string& reason,
                                    Duration at) {
  return RecordIntentsAndUpdates({row}, {{record, reason}}, at);
}

Status Store::RecordIntentsAndUpdates(const std::vector<ActionRow>& intents, const std::vector<WorkloadUpdate>& updates,
                                      Duration at) {
  if (intents.empty() && updates.empty()) return Status::Ok();
  MutexLock lock(mu_);
  Transaction tx(*db_);
  GPUFED_RETURN_IF_ERROR(tx.begin_status());
  GPUFED_RETURN_IF_ERROR(ApplyDeferredLocked(*db_));
  std::vector<WorkloadRecord> written;
  GPUFED_RETURN_IF_ERROR(WriteDecisionsIntentsAndUpdatesLocked(*db_, {}, intents, updates, at, &written));
  return CommitWithDeferred(tx, std::move(written));
}

Status Store::WriteDecisionsIntentsAndUpdatesLocked(Connection& db, const std::vector<DecisionRow>& decisions,
                                                    const std::vector<ActionRow>& intents,
                                                    const std::vector<WorkloadUpdate>& updates, Duration at,
                                                    std::vector<WorkloadRecord>* written) {
  GPUFED_RETURN_IF_ERROR(WriteDecisionsLocked(db, decisions));
  for (const ActionRow& row : intents) GPUFED_RETURN_IF_ERROR(RecordIntentLocked(db, row));
  if (updates.empty()) return Status::Ok();
  // Each update is merged with the row as it stands, in order, so a second change of one
  // workload in a pass reads the first. The database gets each row's last version, in one
  // UPDATE per batch of rows (store_rows.cc), and every state change in order: both ride
  // with the next statement or the COMMIT.
  std::vector<WorkloadRecord> rows;
  std::unordered_map<std::string, size_t> row_of_uid;
  std::vector<Transition> transitions;
  for (const WorkloadUpdate& u : updates) {
    Result<WorkloadRecord> row = ChangeOfLocked(u.record, u.reason, u.at.value_or(at), *written, &transitions);
    if (!row.ok()) return row.status();
    written->push_back(AsStored(*row, row->updated_seq));
    auto [it, added] = row_of_uid.try_emplace(row->uid, rows.size());
    if (added) {
      rows.push_back(*std::move(row));
    } else {
      rows[it->second] = *std::move(row);
    }
  }
  GPUFED_RETURN_IF_ERROR(UpdateRows(db, rows));
  return AddTransitions(db, transitions, Batching::kPowersOfTwo);
}

Result<WorkloadRecord> Store::ChangeOfLocked(const WorkloadRecord& record, const std::string& reason, Duration at,
                                             const std::vector<WorkloadRecord>& written,
                                             std::vector<Transition>* transitions) {
  // The row as this transaction last wrote it, else an unfinished row from the mirror,
  // else (finished) from the database.
  SyncSubmissionsLocked();
  Result<std::optional<WorkloadRecord>> old = std::optional<WorkloadRecord>();
  auto same_uid = [&](const WorkloadRecord& w) { return w.uid == record.uid; };
  if (auto earlier = std::find_if(written.rbegin(), written.rend(), same_uid); earlier != written.rend()) {
    old = std::optional<WorkloadRecord>(*earlier);
  } else if (const WorkloadRecord* mirrored = unfinished_.Find(record.uid)) {
    old = std::optional<WorkloadRecord>(*mirrored);
  } else {
    old = GetOne("uid=$1", record.uid, "");
  }
  if (!old.ok()) return old.status();
  if (!*old) return NotFound("workload " + record.name + " (uid " + record.uid + ")");
  WorkloadRecord r = record;
  // The submission's identity and order never change (UpdateRows sets the rest).
  r.name = (*old)->name;
  r.tenant = (*old)->tenant;
  r.source = (*old)->source;
  r.spec_text = (*old)->spec_text;
  r.submitted = (*old)->submitted;
  r.updated_seq = (*old)->updated_seq;
  r.cancel_requested = r.cancel_requested || (*old)->cancel_requested;  // never lose a cancel
  if ((*old)->state != r.state || (*old)->attempt != r.attempt) {
    transitions->push_back({r.uid, r.attempt, StateName((*old)->state), StateName(r.state), reason, at});
  }
  return r;
}

Status Store::RequestCancel(const std::string& uid) {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(FlushLocked());
  Result<std::unique_ptr<Statement>> s = db_->Prepare("UPDATE workloads SET cancel_requested=1 WHERE uid=$1");
  if (!s.ok()) return s.status();
  GPUFED_RETURN_IF_ERROR((*s)->Bind(1, uid).Run());
  if ((*s)->RowsChanged() == 0) return NotFound("workload uid " + uid);
  SyncSubmissionsLocked();
  unfinished_.MarkCancelRequested(uid);  // an autocommit: durable now
  return Status::Ok();
}

Result<std::vector<Transition>> Store::History(const std::string& uid) {
  MutexLock lock(mu_);
  Result<std::unique_ptr<Statement>> s = db_->Prepare(
      "SELECT workload, attempt, from_state, to_state, reason, at_ms FROM status_history WHERE workload=$1 ORDER BY "
      "id");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, uid);
  std::vector<Transition> out;
  while (true) {
    Result<bool> row = (*s)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({(*s)->Text(0), static_cast<int>((*s)->Int(1)), (*s)->Text(2), (*s)->Text(3), (*s)->Text(4),
                   Duration::FromMillis((*s)->Int(5))});
  }
  return out;
}

}  // namespace gpufed::store
