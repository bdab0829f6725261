// Store::SubmitNumbered: every submission (the API's, the repository's, a scenario's) with
// group commit. With synchronous=FULL every commit is an fsync, and one fsync per
// submission capped the API at about a thousand submissions a second; submissions that
// wait while a group commits share the next one.
//
// A group goes through three steps:
//   1. number: under the store's lock, without writing, each submission is checked (a live
//      workload of that tenant and name, stored or in a group not yet committed, refuses
//      it) and given its uid from the counter in memory;
//   2. journal: the submission journal takes the accepted ones (write-ahead), without the
//      store's lock, so the loop's store calls go on during the journal's fsync;
//   3. commit: under the store's lock, one transaction with the rows and the counter, in
//      the order the groups were numbered.
// A new group starts once the one before has committed (see SubmitNumbered: groups that
// overlapped a commit were meant to overlap the journal's fsync with the store's, but
// numbering waits for the committing group's lock, so they only came out smaller); the
// commit tickets keep groups committing in numbering order all the same.
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

struct Store::SubmitGroup {
  std::vector<QueuedSubmit*> members;
  int64_t first_uid = 0;  // the counter before numbering: what the database must not be past
  int64_t last_uid = 0;   // the counter after numbering: committed with the group
  bool numbered = false;  // false: numbering failed and every member holds the error
  SubmissionJournal journal;  // the store's when the group was numbered
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
  // Either a leader takes this one, or it becomes the leader once the queue reaches it and
  // no numbered group is still uncommitted. Numbering takes the store's lock, which a
  // committing group holds through its COMMIT, so a group started while another commits
  // would only wait for that lock holding whoever had queued so far: without any bound a
  // submission that arrives during a slow commit (a durable PostgreSQL: ms per COMMIT)
  // leads a group of itself, the next one does the same, and groups stay near one
  // submission each (PostgreSQL, 16 clients: 1.3 per commit; one uncommitted group let be:
  // about 6, and with a submission journal 1.5k/s; none: 10, 2.4-3.0k/s; bench/README.md,
  // "The Store on PostgreSQL, faster"). The journal's fsync still runs without the store's
  // lock, so the loop's store calls go on during it.
  while (!me.done && (submit_leader_ || submit_queue_.front() != &me || next_commit_ticket_ != commit_turn_)) {
    submit_cv_.Wait(submit_mu_);
  }
  if (!me.done) {
    submit_leader_ = true;
    SubmitGroup group;
    while (!submit_queue_.empty() && group.members.size() < kMaxSubmitGroup) {
      group.members.push_back(submit_queue_.front());
      submit_queue_.pop_front();
    }
    lock.Unlock();
    commit_stats_.OnGroup(group.members.size());
    NumberSubmits(group);
    const Status journalled = JournalSubmits(group);
    lock.Lock();
    // The next group may be numbered and journalled while this one waits for its turn.
    submit_leader_ = false;
    const uint64_t ticket = next_commit_ticket_++;
    submit_cv_.NotifyAll();
    while (commit_turn_ != ticket) submit_cv_.Wait(submit_mu_);
    lock.Unlock();
    CommitSubmits(group, journalled);
    lock.Lock();
    ++commit_turn_;
    for (QueuedSubmit* q : group.members) q->done = true;
    submit_cv_.NotifyAll();
  }
  // Recorded once the queue's lock is let go: every waiter of a group wakes at once.
  lock.Unlock();
  commit_stats_.OnSubmitWait(std::chrono::duration<double>(std::chrono::steady_clock::now() - queued).count());
  return std::move(me.result);
}

Status Store::LoadUidCounterLocked() {
  if (uid_counter_) return Status::Ok();
  Result<std::unique_ptr<Statement>> read = db_->Prepare("SELECT value FROM meta WHERE key='uid_counter'");
  if (!read.ok()) return read.status();
  Result<bool> row = (*read)->Step();
  if (!row.ok()) return row.status();
  int64_t last = 0;
  if (*row) {
    const std::string text = (*read)->Text(0);
    char* end = nullptr;
    const long long n = std::strtoll(text.c_str(), &end, 10);
    if (end == text.c_str() || *end != '\0' || n < 0) return Internal("store: uid_counter is not a number: " + text);
    last = n;
  }
  uid_counter_ = last;
  return Status::Ok();
}

void Store::NumberSubmits(SubmitGroup& group) {
  MutexLock lock(mu_);
  if (Status loaded = LoadUidCounterLocked(); !loaded.ok()) {
    for (QueuedSubmit* q : group.members) q->result = loaded;
    return;
  }
  // The check reads the unfinished mirror (unfinished_rows.h), not the database: a live
  // row of that tenant and name is an unfinished one, and the mirror holds every committed
  // unfinished row, so numbering a group costs no query (on PostgreSQL a round trip per
  // submission, under the store's lock).
  if (Status loaded = LoadUnfinishedLocked(); !loaded.ok()) {
    for (QueuedSubmit* q : group.members) q->result = loaded;
    return;
  }
  group.first_uid = *uid_counter_;
  for (QueuedSubmit* q : group.members) {
    // Only the same tenant's rows are looked at: another tenant's name is never in the
    // way. Submissions are the only writers of new rows, and they pass through here one
    // group at a time, so what this finds holds until the group commits.
    const std::string key = q->record.tenant + '\n' + q->record.name;
    const WorkloadRecord* live = unfinished_.FindLive(q->record.tenant, q->record.name);
    if (submits_in_flight_.count(key) > 0) {
      q->result = Status(StatusCode::kAlreadyExists, "workload " + q->record.name + " exists (Pending)");
    } else if (live != nullptr) {
      q->result =
          Status(StatusCode::kAlreadyExists, "workload " + q->record.name + " exists (" + StateName(live->state) + ")");
    } else {
      WorkloadRecord r = q->record;
      r.uid = SubmissionUid(r.name, ++*uid_counter_);  // the counter makes it unique across tenants
      r.state = WorkloadState::kPending;
      q->result = std::move(r);
      submits_in_flight_.insert(key);
    }
  }
  group.last_uid = *uid_counter_;
  group.numbered = true;
  group.journal = submission_journal_;
}

Status Store::JournalSubmits(const SubmitGroup& group) {
  if (!group.journal) return Status::Ok();
  std::vector<AcceptedSubmission> accepted;
  for (const QueuedSubmit* q : group.members) {
    if (q->result.ok()) accepted.push_back({&*q->result, &q->facts});
  }
  // Write-ahead: the journal holds every accepted submission before the store does.
  return accepted.empty() ? Status::Ok() : group.journal(accepted);
}

void Store::CommitSubmits(SubmitGroup& group, const Status& journalled) {
  MutexLock lock(mu_);
  for (const QueuedSubmit* q : group.members) {
    if (q->result.ok()) submits_in_flight_.erase(q->record.tenant + '\n' + q->record.name);
  }
  if (!group.numbered) return;
  // The journal may hold what it refused (a write whose sync failed): those uids are never
  // given again, here by the counter in memory, after a restart by the counter committed
  // below without the group's rows.
  for (QueuedSubmit* q : group.members) {
    if (q->result.ok() && !journalled.ok()) q->result = journalled;
  }
  auto fail_accepted = [&](const Status& s) {
    for (QueuedSubmit* q : group.members) {
      if (q->result.ok()) q->result = s;
    }
  };
  Transaction tx(*db_);
  if (!tx.begin_status().ok()) return fail_accepted(tx.begin_status());
  // The counter first, compared and set: it moves to the group's last number only while
  // the database's is not past the group's first (a failed earlier commit leaves it lower,
  // and those numbers are skipped). Another Store on the same database (PostgreSQL) that
  // committed numbers since this one read the counter has moved it past: this group's
  // numbers may be the other's, so nothing of it is written, its submissions fail Aborted
  // (submit again) and the counter is read again. Committed ranges are thus disjoint and
  // the counter never goes back, so no number is given twice. The statement comes first so
  // that a refused group writes nothing, and on PostgreSQL it holds the row's lock: a
  // second Store's group waits, then sees the committed value.
  Result<std::unique_ptr<Statement>> counter = db_->Prepare(
      "INSERT INTO meta(key, value) VALUES('uid_counter', $1) ON CONFLICT(key) DO UPDATE SET "
      "value=excluded.value WHERE CAST(meta.value AS BIGINT) <= $2");
  if (!counter.ok()) return fail_accepted(counter.status());
  if (Status s = (*counter)->Bind(1, std::to_string(group.last_uid)).Bind(2, group.first_uid).Run(); !s.ok()) {
    return fail_accepted(s);
  }
  if ((*counter)->RowsChanged() == 0) {
    uid_counter_.reset();
    return fail_accepted(Status(StatusCode::kAborted,
                                "store: another writer took uid numbers since this store read the counter; the "
                                "submission was not stored, submit it again"));
  }
  // The loop's waiting writes (store_deferred.cc) do not ride along: a submission would
  // wait for up to 256 decision rows to be written, and fail if one of them did. The
  // loop's own next commit carries them.
  std::vector<WorkloadRecord> written;  // the accepted rows, for the unfinished mirror
  for (QueuedSubmit* q : group.members) {
    if (!q->result.ok()) continue;
    // A savepoint per submission: one that cannot be written is undone alone.
    if (Status s = db_->Exec("SAVEPOINT submit"); !s.ok()) return fail_accepted(s);
    const size_t written_before = written.size();
    Status s = InsertSubmissionLocked(*q->result, q->at, &written);
    if (s.ok()) s = db_->Exec("RELEASE SAVEPOINT submit");
    if (!s.ok()) {
      written.resize(written_before);
      Status undone = db_->Exec("ROLLBACK TO SAVEPOINT submit");
      if (undone.ok()) undone = db_->Exec("RELEASE SAVEPOINT submit");
      if (!undone.ok()) return fail_accepted(undone);
      q->result = s;
    }
  }
  // Nothing is acknowledged before the commit: a failed one fails every submission of the
  // group (the transaction rolls back as it goes out of scope).
  if (Status committed = CommitRows(tx, std::move(written), CommitStats::Writer::kApi); !committed.ok()) {
    fail_accepted(committed);
  }
}

}  // namespace gpufed::store
