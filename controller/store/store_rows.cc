// How the Store writes a workload's rows: the workloads row (inserted or updated) and its
// status_history rows, one at a time or, for a submission group, many in one statement.
//
// A group's rows go as few INSERTs per table as insert_batches.h allows rather than one
// per row: on PostgreSQL each statement costs its executor's start and, for workloads,
// a trigger call (migration 9 counts an INSERT's rows once), and the group's statements
// are the serial part of every API submission (bench/README.md, "A submission group's
// rows in one statement").
#include <string>

#include "controller/common/utf8.h"
#include "controller/store/insert_batches.h"
#include "controller/store/store.h"
#include "controller/store/workload_columns.h"

namespace gpufed::store {

namespace {

constexpr int kHistoryColumnCount = 6;

// "($1,...,$c),($c+1,...)": `rows` rows of `columns` parameters.
std::string ValuesOf(size_t rows, int columns) {
  std::string out;
  int n = 0;
  for (size_t row = 0; row < rows; ++row) {
    out += row == 0 ? "(" : ",(";
    for (int c = 0; c < columns; ++c) {
      if (c > 0) out += ',';
      out += '$';
      out += std::to_string(++n);
    }
    out += ')';
  }
  return out;
}

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
  s.Bind(f + 22, r.cancel_requested ? 1 : 0).Bind(f + 23, seq);
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

Status Store::WriteRecord(Connection& db, const WorkloadRecord& r, bool insert, std::vector<WorkloadRecord>* written) {
  const int64_t seq = insert ? seq_.fetch_add(1) + 1 : r.updated_seq;
  if (insert) {
    Result<std::unique_ptr<Statement>> s = db.Prepare(std::string("INSERT INTO workloads(") + kWorkloadColumns +
                                                      ") VALUES" + ValuesOf(1, kWorkloadColumnCount));
    if (!s.ok()) return s.status();
    BindWorkloadRow(**s, 1, r, seq);
    // Its history row follows at once (AddTransition): on PostgreSQL both go in one round
    // trip, and an error of this one is that statement's.
    GPUFED_RETURN_IF_ERROR((*s)->RunWithNext());
  } else {
    // A submission's identity (uid, name, tenant, source, spec, submission time and
    // order) never changes after its insert (UpdateLocked keeps the stored one), so an
    // update sets the rest alone: the indexes on the identity stay untouched.
    Result<std::unique_ptr<Statement>> s = db.Prepare(
        "UPDATE workloads SET state=$1, reason=$2, attempt=$3, cluster=$4, binding_json=$5, resume_ms=$6, "
        "progress_ms=$7, checkpoint_ms=$8, started_ms=$9, finished_ms=$10, estimate_micros=$11, cost_micros=$12, "
        "currency=$13, gpu_milli=$14, cloud=$15, cancel_requested=$16 WHERE uid=$17");
    if (!s.ok()) return s.status();
    (*s)->Bind(1, std::string(StateName(r.state))).Bind(2, BoundedUtf8(r.reason)).Bind(3, r.attempt).Bind(4, r.cluster);
    (*s)->Bind(5, r.binding_json).Bind(6, r.resume_from.millis()).Bind(7, r.progress.millis());
    (*s)->Bind(8, r.checkpoint.millis()).Bind(9, r.started.millis()).Bind(10, r.finished.millis());
    (*s)->Bind(11, r.estimate.micros()).Bind(12, r.cost.micros()).Bind(13, StoredCurrency(r)).Bind(14, r.gpu_milli);
    (*s)->Bind(15, r.cloud ? 1 : 0).Bind(16, r.cancel_requested ? 1 : 0).Bind(17, r.uid);
    GPUFED_RETURN_IF_ERROR((*s)->RunWithNext());  // with the history row or the COMMIT
  }
  written->push_back(AsStored(r, seq));
  return Status::Ok();
}

Status Store::AddTransition(Connection& db, const Transition& t, bool with_next) {
  Result<std::unique_ptr<Statement>> s =
      db.Prepare("INSERT INTO status_history(workload, attempt, from_state, to_state, reason, at_ms) VALUES" +
                 ValuesOf(1, kHistoryColumnCount));
  if (!s.ok()) return s.status();
  BindTransition(**s, 1, t);
  return with_next ? (*s)->RunWithNext() : (*s)->Run();
}

Status Store::InsertSubmission(Connection& db, const WorkloadRecord& record, Duration at,
                               std::vector<WorkloadRecord>* written, bool with_next) {
  if (record.uid.empty()) return InvalidArgument("workload " + record.name + " has no uid");
  const WorkloadRecord r = PendingRow(record);
  GPUFED_RETURN_IF_ERROR(WriteRecord(db, r, true, written));
  return AddTransition(db, SubmittedTransition(r, at), with_next);
}

Status Store::InsertSubmissions(Connection& db, std::span<const NewSubmission> submissions,
                                std::vector<WorkloadRecord>* written) {
  for (const NewSubmission& n : submissions) {
    if (n.record->uid.empty()) return InvalidArgument("workload " + n.record->name + " has no uid");
  }
  // The rows' text (their spec, the API's body) decides how many go in one INSERT
  // (insert_batches.h); both tables are split alike. Every statement goes with the next
  // (Statement::RunWithNext): the caller's next one waits for them all, and the first
  // refusal is its error.
  std::vector<size_t> row_bytes;
  row_bytes.reserve(submissions.size());
  for (const NewSubmission& n : submissions) {
    row_bytes.push_back(n.record->spec_text.size() + n.record->binding_json.size() + n.record->reason.size());
  }
  std::vector<size_t> batches;
  for (size_t done = 0; done < submissions.size();) {
    batches.push_back(RowsInNextInsert(std::span<const size_t>(row_bytes).subspan(done)));
    done += batches.back();
  }
  size_t done = 0;
  for (const size_t rows : batches) {
    Result<std::unique_ptr<Statement>> s = db.Prepare(std::string("INSERT INTO workloads(") + kWorkloadColumns +
                                                      ") VALUES" + ValuesOf(rows, kWorkloadColumnCount));
    if (!s.ok()) return s.status();
    for (size_t i = 0; i < rows; ++i) {
      const WorkloadRecord r = PendingRow(*submissions[done + i].record);
      const int64_t seq = seq_.fetch_add(1) + 1;
      BindWorkloadRow(**s, static_cast<int>(i) * kWorkloadColumnCount + 1, r, seq);
      written->push_back(AsStored(r, seq));
    }
    GPUFED_RETURN_IF_ERROR((*s)->RunWithNext());
    done += rows;
  }
  done = 0;
  for (const size_t rows : batches) {
    Result<std::unique_ptr<Statement>> s =
        db.Prepare("INSERT INTO status_history(workload, attempt, from_state, to_state, reason, at_ms) VALUES" +
                   ValuesOf(rows, kHistoryColumnCount));
    if (!s.ok()) return s.status();
    for (size_t i = 0; i < rows; ++i) {
      const NewSubmission& n = submissions[done + i];
      BindTransition(**s, static_cast<int>(i) * kHistoryColumnCount + 1, SubmittedTransition(*n.record, n.at));
    }
    GPUFED_RETURN_IF_ERROR((*s)->RunWithNext());
    done += rows;
  }
  return Status::Ok();
}

}  // namespace gpufed::store
