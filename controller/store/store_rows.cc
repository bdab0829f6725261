// How the Store writes a workload's rows: the workloads rows (inserted or updated) and
// their status_history rows, many in one statement.
//
// A submission group's rows and a pass's changes go as few statements per table as
// insert_batches.h allows rather than one per row: on PostgreSQL each statement costs its
// executor's start and, for workloads, a trigger call (migrations 9 and 10 count an
// INSERT's and an UPDATE's rows once). A group's statements are the serial part of every
// API submission, and a pass's the loop's (bench/README.md, "A submission group's rows in
// one statement", "A pass's changes in one statement").
#include <array>
#include <string>

#include "controller/common/utf8.h"
#include "controller/store/insert_batches.h"
#include "controller/store/store.h"
#include "controller/store/workload_columns.h"

namespace gpufed::store {

namespace {

constexpr const char* kInsertHistory =
    "INSERT INTO status_history(workload, attempt, from_state, to_state, reason, at_ms) VALUES";
constexpr int kHistoryColumnCount = 6;

// An update's VALUES columns (UpdateRows): the uid it matches, then the columns it sets,
// each cast to the column's type.
constexpr std::array<const char*, 18> kUpdateTypes = {
    "TEXT",    // uid
    "TEXT",    // state
    "TEXT",    // reason
    "BIGINT",  // attempt
    "TEXT",    // cluster
    "TEXT",    // binding_json
    "BIGINT",  // resume_ms
    "BIGINT",  // progress_ms
    "BIGINT",  // checkpoint_ms
    "BIGINT",  // started_ms
    "BIGINT",  // finished_ms
    "BIGINT",  // estimate_micros
    "BIGINT",  // cost_micros
    "TEXT",    // currency
    "BIGINT",  // gpu_milli
    "INTEGER",  // cloud
    "INTEGER",  // cancel_requested
    "TEXT",     // decision_signature
};
// A submission's identity (uid, name, tenant, source, spec, submission time and order)
// never changes after its insert (Store::ChangeOfLocked keeps the stored one), so an
// update sets the rest alone: the indexes on the identity stay untouched. VALUES names
// its columns column1, column2, ... in both engines.
constexpr const char* kUpdateSet =
    "UPDATE workloads SET state=v.column2, reason=v.column3, attempt=v.column4, cluster=v.column5, "
    "binding_json=v.column6, resume_ms=v.column7, progress_ms=v.column8, checkpoint_ms=v.column9, "
    "started_ms=v.column10, finished_ms=v.column11, estimate_micros=v.column12, cost_micros=v.column13, "
    "currency=v.column14, gpu_milli=v.column15, cloud=v.column16, cancel_requested=v.column17, "
    "decision_signature=v.column18 FROM (VALUES";
constexpr const char* kUpdateWhere = ") AS v WHERE workloads.uid=v.column1";

// The one currency a row stores for its estimate and its cost: the cost's once metered.
const std::string& StoredCurrency(const WorkloadRecord& r) {
  return r.cost.currency().empty() ? r.estimate.currency() : r.cost.currency();
}

// Binds `r` as a workloads row (kWorkloadColumns) from parameter `first`.
void BindWorkloadRow(Statement& s, int first, const WorkloadRecord& r, int64_t seq) {
  const int f = first - 1;
  s.Bind(f + 1, r.name).Bind(f + 2, r.uid).Bind(f + 3, r.tenant).Bind(f + 4, r.source).Bind(f + 5, r.spec_text);
  s.Bind(f + 6, r.submitted.millis())
      .Bind(f + 7, std::string(StateName(r.state)))
      .Bind(f + 8, BoundedUtf8(r.reason))
      .Bind(f + 9, r.attempt);
  s.Bind(f + 10, r.cluster).Bind(f + 11, r.binding_json).Bind(f + 12, r.resume_from.millis());
  s.Bind(f + 13, r.progress.millis()).Bind(f + 14, r.checkpoint.millis()).Bind(f + 15, r.started.millis());
  s.Bind(f + 16, r.finished.millis()).Bind(f + 17, r.estimate.micros()).Bind(f + 18, r.cost.micros());
  s.Bind(f + 19, StoredCurrency(r)).Bind(f + 20, r.gpu_milli).Bind(f + 21, r.cloud ? 1 : 0);
  s.Bind(f + 22, r.cancel_requested ? 1 : 0).Bind(f + 23, r.decision_signature).Bind(f + 24, seq);
}

void BindTransition(Statement& s, int first, const Transition& t) {
  const int f = first - 1;
  s.Bind(f + 1, t.workload).Bind(f + 2, t.attempt).Bind(f + 3, t.from).Bind(f + 4, t.to);
  s.Bind(f + 5, BoundedUtf8(t.reason)).Bind(f + 6, t.at.millis());
}

// A submission's row as InsertSubmission writes it: Pending, whatever the record said.
WorkloadRecord PendingRow(const WorkloadRecord& record) {
  WorkloadRecord r = record;
  r.state = WorkloadState::kPending;
  return r;
}

// Its history row (only the uid, attempt and source are read: no Pending copy is needed).
Transition SubmittedTransition(const WorkloadRecord& r, Duration at) {
  return {r.uid, r.attempt, "", "Pending", "submitted (" + r.source + ")", at};
}

}  // namespace

Status Store::InsertRecord(Connection& db, const WorkloadRecord& r, std::vector<WorkloadRecord>* written) {
  const int64_t seq = seq_.fetch_add(1) + 1;
  Result<std::unique_ptr<Statement>> s = db.Prepare(std::string("INSERT INTO workloads(") + kWorkloadColumns +
                                                    ") VALUES" + ValuesOf(1, kWorkloadColumnCount));
  if (!s.ok()) return s.status();
  BindWorkloadRow(**s, 1, r, seq);
  // Its history row follows at once (AddTransition): on PostgreSQL both go in one round
  // trip, and an error of this one is that statement's.
  GPUFED_RETURN_IF_ERROR((*s)->RunWithNext());
  written->push_back(AsStored(r, seq));
  return Status::Ok();
}

Status Store::UpdateRows(Connection& db, std::span<const WorkloadRecord> rows) {
  return WriteInStatements(
      db, rows, Batching::kPowersOfTwo, RowLookup::kByKey,
      [](const WorkloadRecord& r) { return r.binding_json.size() + r.reason.size(); },
      [](size_t n) { return std::string(kUpdateSet) + TypedValuesOf(n, kUpdateTypes) + kUpdateWhere; },
      [](Statement& s, size_t i, const WorkloadRecord& r) {
        const int f = static_cast<int>(i * kUpdateTypes.size());
        s.Bind(f + 1, r.uid).Bind(f + 2, std::string(StateName(r.state))).Bind(f + 3, BoundedUtf8(r.reason));
        s.Bind(f + 4, r.attempt).Bind(f + 5, r.cluster).Bind(f + 6, r.binding_json);
        s.Bind(f + 7, r.resume_from.millis()).Bind(f + 8, r.progress.millis()).Bind(f + 9, r.checkpoint.millis());
        s.Bind(f + 10, r.started.millis()).Bind(f + 11, r.finished.millis()).Bind(f + 12, r.estimate.micros());
        s.Bind(f + 13, r.cost.micros()).Bind(f + 14, StoredCurrency(r)).Bind(f + 15, r.gpu_milli);
        s.Bind(f + 16, r.cloud ? 1 : 0).Bind(f + 17, r.cancel_requested ? 1 : 0).Bind(f + 18, r.decision_signature);
      });  // with the history rows or the COMMIT
}

Status Store::AddTransitions(Connection& db, std::span<const Transition> transitions, Batching batching) {
  return WriteInStatements(
      db, transitions, batching, RowLookup::kPlanned, [](const Transition& t) { return t.reason.size(); },
      [](size_t n) { return std::string(kInsertHistory) + ValuesOf(n, kHistoryColumnCount); },
      [](Statement& s, size_t i, const Transition& t) {
        BindTransition(s, static_cast<int>(i) * kHistoryColumnCount + 1, t);
      });
}

Status Store::AddTransition(Connection& db, const Transition& t, bool with_next) {
  Result<std::unique_ptr<Statement>> s = db.Prepare(std::string(kInsertHistory) + ValuesOf(1, kHistoryColumnCount));
  if (!s.ok()) return s.status();
  BindTransition(**s, 1, t);
  return with_next ? (*s)->RunWithNext() : (*s)->Run();
}

Status Store::InsertSubmission(Connection& db, const WorkloadRecord& record, Duration at,
                               std::vector<WorkloadRecord>* written, bool with_next) {
  if (record.uid.empty()) return InvalidArgument("workload " + record.name + " has no uid");
  const WorkloadRecord r = PendingRow(record);
  GPUFED_RETURN_IF_ERROR(InsertRecord(db, r, written));
  return AddTransition(db, SubmittedTransition(r, at), with_next);
}

Status Store::InsertSubmissions(Connection& db, std::span<const NewSubmission> submissions,
                                std::vector<WorkloadRecord>* written) {
  for (const NewSubmission& n : submissions) {
    if (n.record->uid.empty()) return InvalidArgument("workload " + n.record->name + " has no uid");
  }
  // The rows' text (their spec, the API's body) decides how many go in one INSERT
  // (insert_batches.h); the history rows by their own (short) text. Every statement goes with the next
  // (Statement::RunWithNext): the caller's next one waits for them all, and the first
  // refusal is its error.
  GPUFED_RETURN_IF_ERROR(WriteInStatements(
      db, submissions, Batching::kLongest, RowLookup::kPlanned,
      [](const NewSubmission& n) {
        return n.record->spec_text.size() + n.record->binding_json.size() + n.record->reason.size();
      },
      [](size_t n) {
        return std::string("INSERT INTO workloads(") + kWorkloadColumns + ") VALUES" +
               ValuesOf(n, kWorkloadColumnCount);
      },
      [&](Statement& s, size_t i, const NewSubmission& n) {
        const WorkloadRecord r = PendingRow(*n.record);
        const int64_t seq = seq_.fetch_add(1) + 1;
        BindWorkloadRow(s, static_cast<int>(i) * kWorkloadColumnCount + 1, r, seq);
        written->push_back(AsStored(r, seq));
      }));
  std::vector<Transition> submitted;
  submitted.reserve(submissions.size());
  for (const NewSubmission& n : submissions) submitted.push_back(SubmittedTransition(*n.record, n.at));
  return AddTransitions(db, submitted, Batching::kLongest);
}

}  // namespace gpufed::store
