// Store: decisions index, action ledger, attempts and usage, meta.
#include "controller/store/store.h"

#include <algorithm>
#include <charconv>

#include "controller/common/utf8.h"

namespace gpufed::store {
namespace {

const char* ActionStateName(ActionState s) {
  switch (s) {
    case ActionState::kIntent: return "intent";
    case ActionState::kApplied: return "applied";
    case ActionState::kFailed: return "failed";
  }
  return "intent";
}

ActionState ParseActionState(const std::string& s) {
  if (s == "applied") return ActionState::kApplied;
  if (s == "failed") return ActionState::kFailed;
  return ActionState::kIntent;
}

ActionRow ReadAction(const Statement& s) {
  ActionRow r;
  r.kind = s.Text(0);
  r.key = s.Text(1);
  r.workload = s.Text(2);
  r.attempt = static_cast<int>(s.Int(3));
  r.cluster = s.Text(4);
  r.state = ParseActionState(s.Text(5));
  r.error = s.Text(6);
  r.created = Duration::FromMillis(s.Int(7));
  r.payload = s.Text(8);
  return r;
}

}  // namespace

Result<int64_t> Store::RecordDecision(const DecisionRow& row) {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(FlushLocked());
  return RecordDecisionLocked(*db_, row);
}

namespace {

constexpr const char* kInsertDecision =
    "INSERT INTO decisions(at_ms, workload, attempt, revision, outcome, cluster, reason, record_json, tenant, uid) "
    "VALUES";
constexpr int kDecisionColumnCount = 10;

// Binds `row` from parameter `first`.
void BindDecision(Statement& s, int first, const DecisionRow& row) {
  const int f = first - 1;
  s.Bind(f + 1, row.at.millis()).Bind(f + 2, row.workload).Bind(f + 3, row.attempt).Bind(f + 4, row.revision);
  s.Bind(f + 5, row.outcome).Bind(f + 6, row.cluster).Bind(f + 7, row.reason).Bind(f + 8, row.record_json);
  s.Bind(f + 9, row.tenant).Bind(f + 10, row.uid);
}

}  // namespace

Result<int64_t> Store::RecordDecisionLocked(Connection& db, const DecisionRow& row) {
  Result<std::unique_ptr<Statement>> s =
      db.Prepare(std::string(kInsertDecision) + ValuesOf(1, kDecisionColumnCount) + " RETURNING seq");
  if (!s.ok()) return s.status();
  BindDecision(**s, 1, row);
  Result<bool> returned = (*s)->Step();
  if (!returned.ok()) return returned.status();
  if (!*returned) return Internal("decision insert returned no seq");
  const int64_t seq = (*s)->Int(0);
  GPUFED_RETURN_IF_ERROR((*s)->Run());
  return seq;
}

Status Store::WriteDecisionsLocked(Connection& db, std::span<const DecisionRow> rows) {
  return WriteInStatements(
      db, rows, Batching::kPowersOfTwo, RowLookup::kPlanned,
      [](const DecisionRow& row) { return row.record_json.size() + row.reason.size(); },
      [](size_t n) { return kInsertDecision + ValuesOf(n, kDecisionColumnCount); },
      [](Statement& s, size_t i, const DecisionRow& row) {
        BindDecision(s, static_cast<int>(i) * kDecisionColumnCount + 1, row);
      });
}

Result<std::vector<DecisionRow>> Store::Decisions(const std::string& tenant, const std::string& workload, int limit) {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(FlushLockedIfWaiting<DecisionRow>());
  std::string sql =
      "SELECT seq, at_ms, workload, attempt, revision, outcome, cluster, reason, record_json, tenant, uid FROM "
      "decisions";
  if (!tenant.empty()) sql += workload.empty() ? " WHERE tenant=$1" : " WHERE tenant=$1 AND workload=$2";
  sql += " ORDER BY seq DESC";
  if (limit > 0) sql += " LIMIT " + std::to_string(limit);
  Result<std::unique_ptr<Statement>> s = db_->Prepare(sql);
  if (!s.ok()) return s.status();
  if (!tenant.empty()) (*s)->Bind(1, tenant);
  if (!tenant.empty() && !workload.empty()) (*s)->Bind(2, workload);
  std::vector<DecisionRow> out;
  while (true) {
    Result<bool> row = (*s)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const Statement& q = **s;
    out.push_back({q.Int(0), Duration::FromMillis(q.Int(1)), q.Text(2), static_cast<int>(q.Int(3)), q.Text(4),
                   q.Text(5), q.Text(6), q.Text(7), q.Text(8), q.Text(9), q.Text(10)});
  }
  return out;
}

Status Store::RecordActionIntent(const ActionRow& row) {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(FlushLocked());
  return RecordIntentLocked(*db_, row);
}

Status Store::RecordIntentLocked(Connection& db, const ActionRow& row) {
  Result<std::unique_ptr<Statement>> s = db.Prepare(
      "INSERT INTO actions(kind, key, workload, attempt, cluster, state, error, created_ms, payload) "
      "VALUES($1,$2,$3,$4,$5,'intent','',$6,$7) ON CONFLICT(kind, key) DO UPDATE SET state='intent', error='', "
      "cluster=excluded.cluster, payload=excluded.payload WHERE actions.state='failed'");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, row.kind).Bind(2, row.key).Bind(3, row.workload).Bind(4, row.attempt).Bind(5, row.cluster);
  (*s)->Bind(6, row.created.millis()).Bind(7, row.payload);
  // Always inside the transaction that commits the placement: it rides with the next
  // statement or that COMMIT, which is what makes it durable before any connector call.
  return (*s)->RunWithNext();
}

Status Store::MarkAction(const std::string& kind, const std::string& key, ActionState state, const std::string& error) {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(FlushLocked());
  Result<int64_t> marked = MarkActionLocked(*db_, kind, key, state, error);
  if (!marked.ok()) return marked.status();
  if (*marked == 0) return NotFound("no action " + kind + " " + key);
  return Status::Ok();
}

Result<int64_t> Store::MarkActionLocked(Connection& db, const std::string& kind, const std::string& key,
                                        ActionState state, const std::string& error) {
  Result<std::unique_ptr<Statement>> s = db.Prepare("UPDATE actions SET state=$1, error=$2 WHERE kind=$3 AND key=$4");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, std::string(ActionStateName(state))).Bind(2, error).Bind(3, kind).Bind(4, key);
  GPUFED_RETURN_IF_ERROR((*s)->Run());
  return (*s)->RowsChanged();
}

Result<std::vector<ActionRow>> Store::Actions() {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(FlushLockedIfWaiting<DeferredWrite::Mark>());
  Result<std::unique_ptr<Statement>> s = db_->Prepare(
      "SELECT kind, key, workload, attempt, cluster, state, error, created_ms, payload FROM actions ORDER BY rowid");
  if (!s.ok()) return s.status();
  std::vector<ActionRow> out;
  while (true) {
    Result<bool> row = (*s)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(ReadAction(**s));
  }
  return out;
}

Result<std::optional<ActionRow>> Store::GetAction(const std::string& kind, const std::string& key) {
  Result<std::map<std::string, ActionRow>> found = GetActions(kind, {&key, 1});
  if (!found.ok()) return found.status();
  auto it = found->find(key);
  if (it == found->end()) return std::optional<ActionRow>();
  return std::optional<ActionRow>(std::move(it->second));
}

Result<std::map<std::string, ActionRow>> Store::GetActions(const std::string& kind, std::span<const std::string> keys) {
  // Keys go in slices of a bounded IN list: one statement (and on PostgreSQL one round
  // trip) per slice, not per key. A new leader's first pass asks this for every waiting
  // workload (Reconciler::PlanWaiting): 30,000 lookups one at a time were seconds of its
  // failover (bench/README.md, "A new term's first pass").
  constexpr size_t kKeysPerStatement = 500;
  MutexLock lock(mu_);
  std::map<std::string, ActionRow> out;
  for (size_t from = 0; from < keys.size(); from += kKeysPerStatement) {
    const size_t n = std::min(kKeysPerStatement, keys.size() - from);
    std::string sql =
        "SELECT kind, key, workload, attempt, cluster, state, error, created_ms, payload FROM actions WHERE kind=$1 "
        "AND key IN (";
    for (size_t i = 0; i < n; ++i) sql += (i == 0 ? "$" : ",$") + std::to_string(i + 2);
    sql += ")";
    Result<std::unique_ptr<Statement>> s = db_->Prepare(sql);
    if (!s.ok()) return s.status();
    (*s)->Bind(1, kind);
    for (size_t i = 0; i < n; ++i) (*s)->Bind(static_cast<int>(i) + 2, keys[from + i]);
    while (true) {
      Result<bool> row = (*s)->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      ActionRow action = ReadAction(**s);
      std::string key = action.key;
      out.insert_or_assign(std::move(key), std::move(action));
    }
  }
  for (const DeferredWrite& d : deferred_) {  // an outcome still waiting is the newest
    const auto* mark = std::get_if<DeferredWrite::Mark>(&d.write);
    if (mark == nullptr || mark->kind != kind) continue;
    auto it = out.find(mark->key);
    if (it == out.end()) continue;
    it->second.state = mark->state;
    it->second.error = mark->error;
  }
  return out;
}

Status Store::FinishAttempt(const AttemptRow& a) {
  if (a.uid.empty())
    return InvalidArgument("attempt " + std::to_string(a.attempt) + " of " + a.workload + " has no uid");
  MutexLock lock(mu_);
  Transaction tx(*db_);
  GPUFED_RETURN_IF_ERROR(tx.begin_status());
  GPUFED_RETURN_IF_ERROR(ApplyDeferredLocked(*db_));
  GPUFED_RETURN_IF_ERROR(FinishAttemptLocked(*db_, a));
  return CommitWithDeferred(tx);
}

Status Store::FinishAttemptLocked(Connection& db, const AttemptRow& a) {
  Result<std::unique_ptr<Statement>> s = db.Prepare(
      "INSERT INTO attempts(workload, attempt, tenant, cluster, outcome, gpu_seconds, cost_micros, currency, cloud, "
      "started_ms, finished_ms, uid) VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12) "
      "ON CONFLICT(uid, attempt) DO NOTHING");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, a.workload).Bind(2, a.attempt).Bind(3, a.tenant).Bind(4, a.cluster).Bind(5, a.outcome);
  (*s)->Bind(6, a.gpu_seconds).Bind(7, a.cost.micros()).Bind(8, a.cost.currency()).Bind(9, a.cloud ? 1 : 0);
  (*s)->Bind(10, a.started.millis()).Bind(11, a.finished.millis()).Bind(12, a.uid);
  GPUFED_RETURN_IF_ERROR((*s)->Run());
  if ((*s)->RowsChanged() == 0) return Status::Ok();  // booked before: once only
  Result<std::unique_ptr<Statement>> u = db.Prepare(
      "INSERT INTO tenant_usage(tenant, currency, spent_micros, cloud_spent_micros, gpu_seconds) "
      "VALUES($1,$2,$3,$4,$5) ON CONFLICT(tenant) DO UPDATE SET "
      "spent_micros=tenant_usage.spent_micros+excluded.spent_micros, "
      "cloud_spent_micros=tenant_usage.cloud_spent_micros+excluded.cloud_spent_micros, "
      "gpu_seconds=tenant_usage.gpu_seconds+excluded.gpu_seconds");
  if (!u.ok()) return u.status();
  (*u)->Bind(1, a.tenant).Bind(2, a.cost.currency()).Bind(3, a.cost.micros()).Bind(4, a.cloud ? a.cost.micros() : 0);
  (*u)->Bind(5, a.gpu_seconds);
  return (*u)->Run();
}

Result<std::map<std::string, UsageRow>> Store::Usage() {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(FlushLockedIfWaiting<AttemptRow>());
  Result<std::unique_ptr<Statement>> s =
      db_->Prepare("SELECT tenant, currency, spent_micros, cloud_spent_micros, gpu_seconds FROM tenant_usage");
  if (!s.ok()) return s.status();
  std::map<std::string, UsageRow> out;
  while (true) {
    Result<bool> row = (*s)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const Statement& q = **s;
    out[q.Text(0)] = {q.Text(0), Money(q.Int(2), q.Text(1)), Money(q.Int(3), q.Text(1)), q.Real(4)};
  }
  return out;
}

Result<std::vector<MeteredDayRow>> Store::MeteredDays(Duration since) {
  constexpr int64_t kDayMillis = 86'400'000;
  const int64_t ms = since.millis();
  const int64_t first_day = ms >= 0 ? ms / kDayMillis : (ms - kDayMillis + 1) / kDayMillis;
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(FlushLockedIfWaiting<AttemptRow>());
  Result<std::unique_ptr<Statement>> s = db_->Prepare(
      "SELECT tenant, day, currency, spent_micros, cloud_spent_micros FROM tenant_usage_days WHERE day >= $1 "
      "ORDER BY tenant, day, currency");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, first_day);
  std::vector<MeteredDayRow> out;
  while (true) {
    Result<bool> row = (*s)->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const Statement& q = **s;
    out.push_back({q.Text(0), Duration::FromMillis(q.Int(1) * kDayMillis), Money(q.Int(3), q.Text(2)),
                   Money(q.Int(4), q.Text(2))});
  }
  return out;
}

Result<std::optional<Duration>> Store::GetMetaMillis(const std::string& key) {
  Result<std::optional<std::string>> text = GetMeta(key);
  if (!text.ok()) return text.status();
  if (!*text) return std::optional<Duration>();
  constexpr int64_t kMaxMillis = 10'000'000'000'000;
  const std::string& t = **text;
  int64_t ms = -1;
  auto [end, parsed] = std::from_chars(t.data(), t.data() + t.size(), ms);
  if (parsed != std::errc() || end != t.data() + t.size() || ms < 0 || ms > kMaxMillis) {
    return Status(StatusCode::kDataLoss,
                  "meta " + key + " is not a time in milliseconds: '" + BoundedUtf8(t, 40) + "'");
  }
  return std::optional<Duration>(Duration::FromMillis(ms));
}

Result<std::optional<std::string>> Store::GetMeta(const std::string& key) {
  MutexLock lock(mu_);
  for (auto it = deferred_.rbegin(); it != deferred_.rend(); ++it) {  // a value still waiting is the newest
    const auto* meta = std::get_if<DeferredWrite::Meta>(&it->write);
    if (meta != nullptr && meta->key == key) return std::optional<std::string>(meta->value);
  }
  Result<std::unique_ptr<Statement>> s = db_->Prepare("SELECT value FROM meta WHERE key=$1");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, key);
  Result<bool> row = (*s)->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<std::string>();
  return std::optional<std::string>((*s)->Text(0));
}

Status Store::SetMeta(const std::string& key, const std::string& value) {
  MutexLock lock(mu_);
  GPUFED_RETURN_IF_ERROR(FlushLocked());
  return SetMetaLocked(*db_, key, value);
}

Status Store::SetMetaLocked(Connection& db, const std::string& key, const std::string& value) {
  Result<std::unique_ptr<Statement>> s =
      db.Prepare("INSERT INTO meta(key, value) VALUES($1,$2) ON CONFLICT(key) DO UPDATE SET value=excluded.value");
  if (!s.ok()) return s.status();
  return (*s)->Bind(1, key).Bind(2, value).Run();
}

}  // namespace gpufed::store
