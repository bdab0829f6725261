// Store::SubmitNumbered: every submission (the API's, the repository's, a scenario's) with
// group commit. With synchronous=FULL every commit is an fsync, and one fsync per
// submission capped the API at about a thousand submissions a second; submissions that
// wait while a group commits share the next one.
//
// A group goes through three steps:
//   1. number: without writing, each submission is checked (a live workload of that
//      tenant and name, stored or in a group not yet in the mirror, refuses it) and given
//      its uid from the counter in memory. This reads the live names (live_names.h) under
//      numbering_mu_, not the store's lock, which a pass holds for milliseconds at a time;
//      only a mirror or counter that must be loaded first takes the store's lock;
//   2. journal: the submission journal takes the accepted ones (write-ahead), without any
//      lock, so the loop's store calls go on during the journal's fsync. A journal in
//      PostgreSQL writes the group's rows and counter in the transaction of its records
//      (SubmissionJournal's RidingWrites): one durable commit for both, where two in a row
//      had been the rate's floor (bench/README.md, "One commit for a submission group");
//   3. commit: otherwise one transaction with the rows and the counter, in the order the
//      groups were numbered. With a session of their own (Store::OpenOn's `submissions`)
//      without the store's lock, so a group never waits for a pass's transaction; without
//      one, on the store's session under its lock.
// Rows committed without the store's lock reach the mirror at its next read or write
// (SyncSubmissionsLocked), and stay in submits_in_flight_ until then.
// A new group starts once the one before has committed (kUncommittedGroups); the commit
// tickets keep groups committing in numbering order all the same.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <memory>

#include "controller/common/vocabulary.h"
#include "controller/store/store.h"

namespace gpufed::store {

namespace {

// Groups numbered and not yet committed when a new one may start. Letting the next group
// be numbered and journalled while one commits (2) should overlap the journal's fsync with
// the store's; measured end to end through PostgreSQL it made groups small (half of them
// of 1-2 submissions) and the rate lower and less steady (620-970/s, p99 39-84 ms) than
// starting only after the commit (1: 1.05-1.13k/s, p99 40-41 ms; bench/README.md,
// "Submissions on a session of their own"): both commits flush the same WAL.
constexpr uint64_t kUncommittedGroups = 1;

}  // namespace

// A queued submission's own wake-up. Signalled after its lock is let go, so the woken
// thread takes that lock uncontended. (Not std::counting_semaphore: libstdc++'s spins with
// sched_yield before it sleeps, which on a busy machine is a context switch of its own.)
struct Store::Wakeup {
  // Something it waits for may have changed (`final`: its result is final, and whoever
  // signals touches the submission no more).
  void Signal(bool final) {
    {
      MutexLock lock(mu);
      ++signals;
      done = done || final;
    }
    cv.NotifyOne();
  }
  // Sleeps until signalled; true when the result is final.
  bool Wait() {
    MutexLock lock(mu);
    while (signals == 0) cv.Wait(mu);
    --signals;
    return done;
  }

  Mutex mu;
  CondVar cv;
  int signals GUARDED_BY(mu) = 0;
  bool done GUARDED_BY(mu) = false;
};

struct Store::QueuedSubmit {
  WorkloadRecord record;
  Duration at;
  SubmissionFacts facts;
  Result<WorkloadRecord> result = Status(StatusCode::kInternal, "not committed");
  bool in_flight = false;  // numbered: its name is in submits_in_flight_
  bool written = false;    // its rows are in the group's transaction
  // Where its thread sleeps: a wake-up of its own, so a group's commit wakes its members
  // and the next leader only, and a woken member takes no lock held by another to return. One
  // condition for every waiter woke them all twice per group, and each woken thread then
  // queued for submit_mu_: at 16 clients that was a third of the leader's context
  // switches (bench/README.md, "Fewer wake-ups per submission"). Shared, so whoever
  // wakes it may do so after letting go of submit_mu_ (the submission may be gone by then).
  std::shared_ptr<Wakeup> wakeup = std::make_shared<Wakeup>();
};

struct Store::SubmitGroup {
  std::vector<QueuedSubmit*> members;
  int64_t first_uid = 0;  // the counter before numbering: what the database must not be past
  int64_t last_uid = 0;   // the counter after numbering: committed with the group
  bool numbered = false;  // false: numbering failed and every member holds the error
  SubmissionJournal journal;  // the store's when the group was numbered
  // The journal wrote the rows in its own transaction (RidingWrites): what writing them
  // returned there, the rows written and whether the counter had moved.
  bool rode = false;
  Status rows_status;
  std::vector<WorkloadRecord> written;
  bool counter_moved = false;
};

void Store::SetSubmissionJournal(SubmissionJournal journal) {
  MutexLock lock(numbering_mu_);
  submission_journal_ = std::move(journal);
}

size_t Store::queued_submissions() const {
  MutexLock lock(submit_mu_);
  return submit_queue_.size();
}

Result<WorkloadRecord> Store::SubmitNumbered(WorkloadRecord record, Duration at, SubmissionFacts facts) {
  const auto queued = std::chrono::steady_clock::now();
  QueuedSubmit me{std::move(record), at, std::move(facts)};
  MutexLock lock(submit_mu_);
  submit_queue_.push_back(&me);
  // Either a leader takes this one, or it becomes the leader once the queue reaches it and
  // fewer than kUncommittedGroups numbered groups are uncommitted. Without a bound a
  // submission that arrives during a slow commit (a durable PostgreSQL: ms per COMMIT)
  // leads a group of itself, the next one does the same, and groups stay near one
  // submission each (PostgreSQL, 16 clients: 1.3 per commit; bench/README.md, "The Store
  // on PostgreSQL, faster"); waiting for the commit ahead, a leader takes everyone who
  // queued meanwhile.
  while (!MayLeadLocked(me)) {
    lock.Unlock();
    // Final: its leader wrote the result before signalling, and touches `me` no more.
    if (me.wakeup->Wait()) return Finish(std::move(me.result), queued);
    lock.Lock();
  }
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
  // Another leader may start (with kUncommittedGroups above 1, while this group waits for
  // its turn and commits); the tickets keep the commits in numbering order.
  submit_leader_ = false;
  const uint64_t ticket = next_commit_ticket_++;
  std::shared_ptr<Wakeup> next = NextLeaderLocked();
  if (next != nullptr) {
    lock.Unlock();
    next->Signal(/*final=*/false);
    lock.Lock();
  }
  while (commit_turn_ != ticket) commit_turn_cv_.Wait(submit_mu_);
  lock.Unlock();
  CommitSubmits(group, journalled);
  lock.Lock();
  ++commit_turn_;
  commit_turn_cv_.NotifyAll();
  // Taken under the lock, woken after it: a woken thread finds nothing held.
  std::vector<std::shared_ptr<Wakeup>> members;
  members.reserve(group.members.size());
  for (QueuedSubmit* q : group.members) {
    if (q != &me) members.push_back(q->wakeup);
  }
  next = NextLeaderLocked();
  lock.Unlock();
  // The next leader first: its group is the queue's serial path, and the members' wake-ups
  // ahead of it took 0.44-0.50 ms of every group's (bench/README.md, "A submission group's
  // rows in one statement"). The members only return their answers.
  if (next != nullptr) next->Signal(/*final=*/false);
  for (const std::shared_ptr<Wakeup>& member : members) member->Signal(/*final=*/true);
  return Finish(std::move(me.result), queued);
}

bool Store::MayLeadLocked(const QueuedSubmit& me) const {
  return !submit_leader_ && !submit_queue_.empty() && submit_queue_.front() == &me &&
         next_commit_ticket_ - commit_turn_ < kUncommittedGroups;
}

std::shared_ptr<Store::Wakeup> Store::NextLeaderLocked() const {
  if (submit_queue_.empty() || !MayLeadLocked(*submit_queue_.front())) return nullptr;
  return submit_queue_.front()->wakeup;
}

Result<WorkloadRecord> Store::Finish(Result<WorkloadRecord> result, std::chrono::steady_clock::time_point queued) {
  // Recorded once the queue's lock is let go: every member of a group wakes at once.
  commit_stats_.OnSubmitWait(std::chrono::duration<double>(std::chrono::steady_clock::now() - queued).count());
  return result;
}

Status Store::LoadUidCounterLocked() {
  {
    MutexLock numbering(numbering_mu_);
    if (uid_counter_) return Status::Ok();
  }
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
  MutexLock numbering(numbering_mu_);
  // A group may have committed numbers meanwhile (on the submissions' session): keep the
  // higher, as the compared-and-set commit would refuse the lower anyway.
  if (!uid_counter_ || *uid_counter_ < last) uid_counter_ = last;
  return Status::Ok();
}

void Store::SyncSubmissionsLocked() {
  MutexLock numbering(numbering_mu_);
  if (mirror_unsure_) {
    mirror_unsure_ = false;
    unfinished_.Forget();  // and the live names: numbering waits for the next load
  }
  if (committed_submits_.empty()) return;
  // Applied and taken out of flight under numbering_mu_ together, so numbering always
  // finds a committed name in one of the two.
  for (const WorkloadRecord& r : committed_submits_) submits_in_flight_.erase(LiveNames::Key(r.tenant, r.name));
  unfinished_.Apply(std::move(committed_submits_));  // nothing when not loaded: the load reads them
  committed_submits_.clear();
}

void Store::NumberSubmits(SubmitGroup& group) {
  {
    MutexLock numbering(numbering_mu_);
    if (NumberFromLiveNamesLocked(group)) return;
  }
  // The mirror (and with it the live names) or the counter must be loaded first: the
  // store's lock, then numbering's (the lock order). Rare: the first group, and after a
  // COMMIT whose outcome is unknown.
  MutexLock lock(mu_);
  Status loaded = LoadUnfinishedLocked();
  if (loaded.ok()) loaded = LoadUidCounterLocked();
  MutexLock numbering(numbering_mu_);
  if (loaded.ok() && NumberFromLiveNamesLocked(group)) return;
  if (loaded.ok()) loaded = Internal("store: the unfinished rows were forgotten while numbering; submit again");
  for (QueuedSubmit* q : group.members) q->result = loaded;
}

bool Store::NumberFromLiveNamesLocked(SubmitGroup& group) {
  if (!uid_counter_ || mirror_unsure_) return false;
  // The check reads the live names of the unfinished mirror (live_names.h), not the
  // database: a live row of that tenant and name is an unfinished one, and the mirror
  // holds every committed unfinished row but those of groups committed since it was last
  // synchronised, whose names are still in submits_in_flight_. So numbering a group costs
  // no query (on PostgreSQL a round trip per submission) and no wait for the store's lock.
  std::vector<std::string> keys;
  keys.reserve(group.members.size());
  for (const QueuedSubmit* q : group.members) keys.push_back(LiveNames::Key(q->record.tenant, q->record.name));
  std::vector<std::optional<WorkloadState>> live;
  if (!live_names_.Find(keys, &live)) return false;
  group.first_uid = *uid_counter_;
  for (size_t i = 0; i < group.members.size(); ++i) {
    QueuedSubmit* q = group.members[i];
    // Only the same tenant's rows are looked at: another tenant's name is never in the
    // way. Submissions are the only writers of new rows, and they pass through here one
    // group at a time, so what this finds holds until the group commits.
    if (submits_in_flight_.count(keys[i]) > 0) {
      q->result = Status(StatusCode::kAlreadyExists, "workload " + q->record.name + " exists (Pending)");
    } else if (live[i]) {
      q->result =
          Status(StatusCode::kAlreadyExists, "workload " + q->record.name + " exists (" + StateName(*live[i]) + ")");
    } else {
      WorkloadRecord r = q->record;
      r.uid = SubmissionUid(r.name, ++*uid_counter_);  // the counter makes it unique across tenants
      r.state = WorkloadState::kPending;
      q->result = std::move(r);
      q->in_flight = true;
      submits_in_flight_.insert(keys[i]);
    }
  }
  group.last_uid = *uid_counter_;
  group.numbered = true;
  group.journal = submission_journal_;
  return true;
}

Status Store::JournalSubmits(SubmitGroup& group) {
  if (!group.journal) return Status::Ok();
  std::vector<AcceptedSubmission> accepted;
  for (const QueuedSubmit* q : group.members) {
    if (q->result.ok()) accepted.push_back({&*q->result, &q->facts});
  }
  if (accepted.empty()) return Status::Ok();
  // Run by the journal inside the transaction of its records, when it can, on whichever
  // thread leads the journal's commit while this one waits for it: it takes no lock of
  // the store's (the journal's session is neither the loop's nor guarded by mu_).
  // Called again when the journal runs its commit again (RefusedRidingWrite): nothing of
  // the first call was stored, so the rows are written afresh. A submission the first call
  // refused by itself (text PostgreSQL cannot hold, a row refused on its own) stays
  // refused: it would be again.
  RidingWrites writes = [this, &group](Connection& db, RefusedRidingWrite refused) {
    group.rode = true;
    group.written.clear();
    group.counter_moved = false;
    for (QueuedSubmit* q : group.members) q->written = false;
    group.rows_status = WriteGroupRows(db, group, &group.written, &group.counter_moved, refused);
    return group.rows_status;
  };
  // Write-ahead: the journal holds every accepted submission before (or as) the store does.
  const auto start = std::chrono::steady_clock::now();
  Status journalled = group.journal(accepted, writes);
  if (group.rode) {
    // The group's one commit was the journal's.
    commit_stats_.OnCommit(CommitStats::Writer::kApi,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    commits_.fetch_add(1, std::memory_order_relaxed);
  }
  return journalled;
}

void Store::CommitSubmits(SubmitGroup& group, const Status& journalled) {
  if (!group.numbered) return;  // every member holds numbering's error; none is in flight
  // The journal may hold what it refused (a write whose sync failed): those uids are never
  // given again, here by the counter in memory, after a restart by the counter committed
  // without the group's rows.
  for (QueuedSubmit* q : group.members) {
    if (q->result.ok() && !journalled.ok()) q->result = journalled;
  }
  std::vector<WorkloadRecord> written;  // the accepted rows, for the unfinished mirror
  bool counter_moved = false;
  if (group.rode) {
    // Written in the journal's transaction, which has committed or failed already.
    counter_moved = group.counter_moved;
    if (journalled.ok()) {
      written = std::move(group.written);
    } else if (!group.rows_status.ok()) {
      // Undone to the journal's savepoint: no row of the group is stored, surely.
      for (QueuedSubmit* q : group.members) q->written = false;
    } else {
      // The rows were written and their COMMIT failed, perhaps with an unknown outcome:
      // the mirror (below: written rows of failed submissions) and the counter are read
      // again.
      counter_moved = true;
    }
  } else if (submit_db_ != nullptr) {
    // One group commits at a time (the tickets), so the submissions' session needs no more
    // than its own lock.
    MutexLock lock(submit_db_mu_);
    WriteGroup(*submit_db_, group, &written, &counter_moved);
  } else {
    MutexLock lock(mu_);
    WriteGroup(*db_, group, &written, &counter_moved);
  }
  MutexLock numbering(numbering_mu_);
  if (counter_moved) uid_counter_.reset();
  bool unsure = false;
  for (QueuedSubmit* q : group.members) {
    if (!q->in_flight) continue;
    if (q->result.ok()) continue;  // committed: in flight until the mirror has its row
    // Not stored: its name is free again. A row that was written when the COMMIT failed
    // may have committed all the same (a lost connection): the mirror is read again.
    submits_in_flight_.erase(LiveNames::Key(q->record.tenant, q->record.name));
    unsure = unsure || q->written;
  }
  if (unsure) mirror_unsure_ = true;
  std::move(written.begin(), written.end(), std::back_inserter(committed_submits_));
}

void Store::WriteGroup(Connection& db, SubmitGroup& group, std::vector<WorkloadRecord>* written, bool* counter_moved) {
  auto fail_accepted = [&](const Status& s) {
    written->clear();
    for (QueuedSubmit* q : group.members) {
      if (q->result.ok()) q->result = s;
    }
  };
  Transaction tx(db);
  if (!tx.begin_status().ok()) return fail_accepted(tx.begin_status());
  // An error failed every accepted submission; the transaction rolls back as it goes out
  // of scope.
  if (!WriteGroupRows(db, group, written, counter_moved, RefusedRidingWrite::kUndoneByTheWrites).ok()) return;
  // Nothing is acknowledged before the commit: a failed one fails every submission of the
  // group (the transaction rolls back as it goes out of scope).
  const auto start = std::chrono::steady_clock::now();
  Status committed = tx.Commit();
  commit_stats_.OnCommit(CommitStats::Writer::kApi,
                         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  commits_.fetch_add(1, std::memory_order_relaxed);
  if (!committed.ok()) fail_accepted(committed);
}

Status Store::WriteGroupRows(Connection& db, SubmitGroup& group, std::vector<WorkloadRecord>* written,
                             bool* counter_moved, RefusedRidingWrite refused) {
  auto fail_accepted = [&](const Status& s) {
    written->clear();
    for (QueuedSubmit* q : group.members) {
      if (q->result.ok()) q->result = s;
    }
    return s;
  };
  // The loop's waiting writes (store_deferred.cc) do not ride along: a submission would
  // wait for up to 256 decision rows to be written, and fail if one of them did. The
  // loop's own next commit carries them.
  if (refused == RefusedRidingWrite::kFailsTheCommit && db.dialect() == SqlDialect::kPostgres) {
    return WriteGroupRowsUnanswered(db, group, written);
  }
  if (WriteGroupRowsAtOnce(db, group, written)) return Status::Ok();
  // One by one: the counter first, so that a refused group writes nothing, and on
  // PostgreSQL it holds the row's lock: a second Store's group waits, then sees the
  // committed value.
  Result<bool> took = TakeUidNumbers(db, group);
  if (!took.ok()) return fail_accepted(took.status());
  if (!*took) {
    *counter_moved = true;
    return fail_accepted(Status(StatusCode::kAborted,
                                "store: another writer took uid numbers since this store read the counter; the "
                                "submission was not stored, submit it again"));
  }
  for (QueuedSubmit* q : group.members) {
    if (!q->result.ok()) continue;
    // A savepoint per submission: one that cannot be written is undone alone.
    if (Status s = db.Exec("SAVEPOINT submit"); !s.ok()) return fail_accepted(s);
    const size_t written_before = written->size();
    Status s = InsertSubmission(db, *q->result, q->at, written);
    if (s.ok()) s = db.Exec("RELEASE SAVEPOINT submit");
    if (!s.ok()) {
      written->resize(written_before);
      Status undone = db.Exec("ROLLBACK TO SAVEPOINT submit");
      if (undone.ok()) undone = db.Exec("RELEASE SAVEPOINT submit");
      if (!undone.ok()) return fail_accepted(undone);
      q->result = s;
    } else {
      q->written = true;
    }
  }
  return Status::Ok();
}

Result<bool> Store::TakeUidNumbers(Connection& db, const SubmitGroup& group) {
  // Compared and set: the counter moves to the group's last number only while the
  // database's is not past the group's first (a failed earlier commit leaves it lower,
  // and those numbers are skipped). Another Store on the same database (PostgreSQL) that
  // committed numbers since this one read the counter has moved it past: this group's
  // numbers may be the other's, so nothing of it is written, its submissions fail Aborted
  // (submit again) and the counter is read again. Committed ranges are thus disjoint and
  // the counter never goes back, so no number is given twice.
  Result<std::unique_ptr<Statement>> counter = db.Prepare(
      "INSERT INTO meta(key, value) VALUES('uid_counter', $1) ON CONFLICT(key) DO UPDATE SET "
      "value=excluded.value WHERE CAST(meta.value AS BIGINT) <= $2");
  if (!counter.ok()) return counter.status();
  if (Status s = (*counter)->Bind(1, std::to_string(group.last_uid)).Bind(2, group.first_uid).Run(); !s.ok()) {
    return s;
  }
  return (*counter)->RowsChanged() > 0;
}

Status Store::WriteGroupRowsUnanswered(Connection& db, SubmitGroup& group, std::vector<WorkloadRecord>* written) {
  // Nothing waits for a reply and nothing is undone here, so no savepoint: a row the
  // database refuses, a counter another writer moved, or a row refused before it was sent
  // fails the journal's commit, which calls these writes again with kUndoneByTheWrites
  // (WriteGroupRowsAtOnce, then one by one). No member's result changes here.
  std::vector<QueuedSubmit*> accepted;
  std::vector<NewSubmission> rows;
  for (QueuedSubmit* q : group.members) {
    if (!q->result.ok()) continue;
    accepted.push_back(q);
    rows.push_back({&*q->result, q->at});
  }
  Status s = accepted.empty() ? Status::Ok() : InsertSubmissions(db, rows, written);
  if (s.ok()) s = MoveUidCounterOrRefuse(db, group);
  if (!s.ok()) {
    written->clear();
    return s;
  }
  for (QueuedSubmit* q : accepted) q->written = true;
  return Status::Ok();
}

Status Store::MoveUidCounterOrRefuse(Connection& db, const SubmitGroup& group) {
  // TakeUidNumbers' compare-and-set, which fails when it sets nothing (division by zero,
  // as the journal's INSERT checks its count) rather than saying so in a reply to be read.
  Result<std::unique_ptr<Statement>> counter = db.Prepare(
      "WITH moved AS (INSERT INTO meta(key, value) VALUES('uid_counter', $1) ON CONFLICT(key) DO UPDATE SET "
      "value=excluded.value WHERE CAST(meta.value AS BIGINT) <= $2 RETURNING 1) "
      "SELECT 1 / count(*)::int AS moved FROM moved");
  if (!counter.ok()) return counter.status();
  return (*counter)->Bind(1, std::to_string(group.last_uid)).Bind(2, group.first_uid).RunWithNext();
}

bool Store::WriteGroupRowsAtOnce(Connection& db, SubmitGroup& group, std::vector<WorkloadRecord>* written) {
  std::vector<QueuedSubmit*> accepted;
  for (QueuedSubmit* q : group.members) {
    if (q->result.ok()) accepted.push_back(q);
  }
  if (accepted.empty()) return false;  // the counter alone: written one by one, as it is
  // The rows go as one INSERT per table (InsertSubmissions), each sent with the next (a
  // pipeline on PostgreSQL), and the counter last, waiting for them all: one round trip
  // for the group. A row the database
  // refuses (another Store's live name or number) or a counter another writer moved fails
  // the lot, which is undone to this savepoint: none of the group's rows stays, and the
  // caller writes them again one by one after the counter, so that the refusal is that
  // submission's alone, or the group's when the counter moved.
  if (!db.Exec("SAVEPOINT submit_group").ok()) return false;
  const size_t written_before = written->size();
  std::vector<NewSubmission> rows;
  rows.reserve(accepted.size());
  for (const QueuedSubmit* q : accepted) rows.push_back({&*q->result, q->at});
  Status s = InsertSubmissions(db, rows, written);
  if (s.ok()) {
    Result<bool> took = TakeUidNumbers(db, group);
    s = !took.ok() ? took.status() : *took ? Status::Ok() : Status(StatusCode::kAborted, "the counter moved");
  }
  if (s.ok()) s = db.Exec("RELEASE SAVEPOINT submit_group");
  if (s.ok()) {
    for (QueuedSubmit* q : accepted) q->written = true;
    return true;
  }
  written->resize(written_before);
  // A row refused before it was sent (its text) leaves the rows before it queued: sent
  // now, so that the ROLLBACK TO below follows statements alone and undoes them (a
  // savepoint command queued behind a failing statement would poison the transaction).
  if (Result<std::unique_ptr<Statement>> flush = db.Prepare("SELECT 1"); flush.ok()) (void)(*flush)->Step();
  // Undone here or, when even that fails, by the caller's failure at its next savepoint.
  if (db.Exec("ROLLBACK TO SAVEPOINT submit_group").ok()) (void)db.Exec("RELEASE SAVEPOINT submit_group");
  return false;
}

}  // namespace gpufed::store
