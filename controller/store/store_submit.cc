// Store::SubmitNumbered: every submission (the API's, the repository's, a scenario's) with
// group commit. With synchronous=FULL every commit is an fsync, and one fsync per
// submission capped the API at about a thousand submissions a second; submissions that
// wait while a group commits share the next one. A group is journalled (workload-submitted,
// through the submission journal) after its uids are given and before it commits, so the
// journal's append also serves the whole group at once.
#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "controller/common/vocabulary.h"
#include "controller/store/store.h"

namespace gpufed::store {

struct Store::QueuedSubmit {
  WorkloadRecord record;
  Duration at;
  SubmissionFacts facts;
  Result<WorkloadRecord> result = Status(StatusCode::kInternal, "not committed");
  bool done = false;
};

void Store::SetSubmissionJournal(SubmissionJournal journal) {
  MutexLock lock(mu_);
  submission_journal_ = std::move(journal);
}

Result<WorkloadRecord> Store::SubmitNumbered(WorkloadRecord record, Duration at, SubmissionFacts facts) {
  const auto queued = std::chrono::steady_clock::now();
  QueuedSubmit me{std::move(record), at, std::move(facts)};
  MutexLock lock(submit_mu_);
  submit_queue_.push_back(&me);
  // Either a leader commits this one, or it becomes the leader once the queue reaches it.
  while (!me.done && (submit_leader_ || submit_queue_.front() != &me)) submit_cv_.Wait(submit_mu_);
  if (!me.done) {
    submit_leader_ = true;
    std::vector<QueuedSubmit*> group;
    while (!submit_queue_.empty() && group.size() < kMaxSubmitGroup) {
      group.push_back(submit_queue_.front());
      submit_queue_.pop_front();
    }
    lock.Unlock();
    commit_stats_.OnGroup(group.size());
    CommitSubmits(group);
    lock.Lock();
    for (QueuedSubmit* q : group) q->done = true;
    submit_leader_ = false;
    submit_cv_.NotifyAll();
  }
  // Recorded once the queue's lock is let go: every waiter of a group wakes at once.
  lock.Unlock();
  commit_stats_.OnSubmitWait(std::chrono::duration<double>(std::chrono::steady_clock::now() - queued).count());
  return std::move(me.result);
}

void Store::CommitSubmits(const std::vector<QueuedSubmit*>& group) {
  auto fail_all = [&](const Status& s) {
    for (QueuedSubmit* q : group) q->result = s;
  };
  MutexLock lock(mu_);
  Transaction tx(*db_);
  if (!tx.begin_status().ok()) return fail_all(tx.begin_status());
  // The loop's waiting writes (store_deferred.cc) do not ride along: a submission would
  // wait for up to 256 decision rows to be written, and fail if one of them did. The
  // loop's own next commit carries them.
  Result<std::unique_ptr<Statement>> read = db_->Prepare("SELECT value FROM meta WHERE key='uid_counter'");
  if (!read.ok()) return fail_all(read.status());
  Result<bool> row = (*read)->Step();
  if (!row.ok()) return fail_all(row.status());
  int64_t last = 0;
  if (*row) {
    const std::string text = (*read)->Text(0);
    char* end = nullptr;
    const long long n = std::strtoll(text.c_str(), &end, 10);
    if (end == text.c_str() || *end != '\0' || n < 0)
      return fail_all(Internal("store: uid_counter is not a number: " + text));
    last = n;
  }
  last = std::max(last, uid_journalled_);
  const int64_t first = last;
  std::vector<WorkloadRecord> written;  // the accepted rows, for the unfinished mirror
  // Undoes the group's rows, not its numbers, when the journal refuses them (below).
  if (Status s = db_->Exec("SAVEPOINT submit_group"); !s.ok()) return fail_all(s);
  for (QueuedSubmit* q : group) {
    // A savepoint per submission: a refused one is undone alone.
    if (Status s = db_->Exec("SAVEPOINT submit"); !s.ok()) return fail_all(s);
    WorkloadRecord r = q->record;
    r.uid = SubmissionUid(r.name, last + 1);  // the counter makes it unique across tenants
    const size_t written_before = written.size();
    Status s = SubmitLocked(r, q->at, &written);
    if (s.ok()) {
      s = db_->Exec("RELEASE submit");
      if (!s.ok()) return fail_all(s);
      ++last;
      r.state = WorkloadState::kPending;
      q->result = std::move(r);
    } else {
      written.resize(written_before);
      Status undone = db_->Exec("ROLLBACK TO submit");
      if (undone.ok()) undone = db_->Exec("RELEASE submit");
      if (!undone.ok()) return fail_all(undone);
      q->result = s;
    }
  }
  // Write-ahead: the journal holds every accepted submission before the store does.
  if (submission_journal_) {
    Status journalled = JournalSubmits(group);
    // Whatever it answered, the journal may hold these uids (a write whose sync failed),
    // so they are never given to another submission: not by this process, and, through
    // the counter committed below without the group's rows, not after a restart.
    uid_journalled_ = last;
    if (!journalled.ok()) {
      for (QueuedSubmit* q : group) {
        if (q->result.ok()) q->result = journalled;
      }
      written.clear();
      if (!db_->Exec("ROLLBACK TO submit_group").ok()) return;  // the whole transaction rolls back
    }
  }
  if (Status s = db_->Exec("RELEASE submit_group"); !s.ok()) return fail_all(s);
  if (last != first) {
    Result<std::unique_ptr<Statement>> write =
        db_->Prepare("INSERT OR REPLACE INTO meta(key, value) VALUES('uid_counter', ?)");
    if (!write.ok()) return fail_all(write.status());
    if (Status s = (*write)->Bind(1, std::to_string(last)).Run(); !s.ok()) return fail_all(s);
  }
  // Nothing is acknowledged before the commit: a failed one fails every submission of the
  // group, accepted or not (the transaction rolls back as it goes out of scope).
  if (Status committed = CommitRows(tx, std::move(written), CommitStats::Writer::kApi); !committed.ok()) {
    for (QueuedSubmit* q : group) {
      if (q->result.ok()) q->result = committed;
    }
  }
}

Status Store::JournalSubmits(const std::vector<QueuedSubmit*>& group) {
  std::vector<AcceptedSubmission> accepted;
  for (const QueuedSubmit* q : group) {
    if (q->result.ok()) accepted.push_back({&*q->result, &q->facts});
  }
  return accepted.empty() ? Status::Ok() : submission_journal_(accepted);
}

}  // namespace gpufed::store
