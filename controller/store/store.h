#pragma once
// The controller's durable state: workloads and their status history, the decisions
// index, the action ledger that makes connector actions idempotent across crashes,
// finished attempts and tenant usage. Every method is one transaction; a method that
// returns OK is durable. Thread-safe (one connection behind a mutex, and optionally a
// second one for API submissions' group commits): the HTTP server and the reconcile loop
// share one Store. Written against sql.h's Connection in portable SQL
// (README.md, "Portable SQL"): SQLite (WAL, synchronous=FULL) today, PostgreSQL next.
//
// Schema versions (schema.h, shared by every dialect) are applied in order by Open; the
// connection keeps the version (SQLite: PRAGMA user_version). OpenReadOnly neither
// migrates nor writes.
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "controller/common/durability.h"
#include "controller/common/fair_mutex.h"
#include "controller/common/mutex.h"
#include "controller/store/commit_stats.h"
#include "controller/store/insert_batches.h"
#include "controller/store/live_names.h"
#include "controller/store/records.h"
#include "controller/store/sql.h"
#include "controller/store/unfinished_rows.h"

namespace gpufed::store {

// What the journal of submissions records about one beside its row, none of which the
// database keeps: who submitted it and exactly what (SubmitNumbered).
struct SubmissionFacts {
  std::string principal;  // who submitted it: an API token's name, or a source of the controller's own
  std::string spec_hash;  // the workload as accepted ("sha256:<hex>")
  std::string revision;   // the policy revision it was accepted under
};
// A submission of a group about to be committed, with the uid it was given.
struct AcceptedSubmission {
  const WorkloadRecord* record;
  const SubmissionFacts* facts;
};
// Store writes on a Connection that is inside a transaction someone else commits, which
// they ride in: a submission group's counter and rows in its journal records' transaction
// (SubmissionJournal, below), or a pass's decision rows, intents and updates in its
// decision records' (RecordIntentsAndUpdatesWith).
//
// `refused` says what a write the database refuses does there. kUndoneByTheWrites: it is
// theirs to learn (they read the replies they depend on) and undo to a savepoint of
// theirs; the transaction goes on. kFailsTheCommit: it fails the whole commit, and the
// writes are called again, kUndoneByTheWrites, in the commit run again; so they need not
// wait for any reply (a submission group's commit is then one round trip on PostgreSQL).
enum class RefusedRidingWrite { kUndoneByTheWrites, kFailsTheCommit };
using RidingWrites = std::function<Status(Connection& db, RefusedRidingWrite refused)>;
// A commit that `writes` ride in (issue 38: a decision's journal records and the store
// rows that follow from it, one durable commit). It calls `writes` at most once, on any
// thread, before it returns, and returns OK only when both committed; an error from
// `writes` is returned as it is (their transaction, or their savepoint, undone).
using RidingCommit = std::function<Status(const RidingWrites& writes)>;
// Write-ahead for submissions (Store::SetSubmissionJournal): OK once every submission
// given is durable in the journal; any error keeps them all out of the store. A journal
// that can (a PostgreSQL table) runs `writes` inside the transaction that commits its
// records, so records and rows are one durable commit, not two (issue 38); it then
// returns OK only when the rows committed too. It may run them first with
// kFailsTheCommit and, when that commit fails, once more with kUndoneByTheWrites. One
// that cannot ignores `writes`, and the store commits the rows itself afterwards.
using SubmissionJournal =
    std::function<Status(const std::vector<AcceptedSubmission>& accepted, const RidingWrites& writes)>;

class Store {
 public:
  // Opens or creates the database at `path` and migrates it to the latest schema.
  // DataLoss for a file that is not a gpufed store; FailedPrecondition for a schema
  // newer than this binary. `durability`: see common/durability.h (kUnsynced only for
  // simulated federations).
  static Result<std::unique_ptr<Store>> Open(const std::string& path, Durability durability = Durability::kSynced);
  // Opens an existing store for reading only (`gpufed plan --state`; Database::OpenReadOnly:
  // no file is created, chmod'ed or written). It is not migrated: FailedPrecondition for
  // a schema older or newer than this binary's, naming the gpufed to use. NotFound when
  // `path` does not exist. Every write fails with FailedPrecondition (kReadOnlyRefusal);
  // the `...Later` writes that return nothing are dropped (they could never commit), so
  // GetMeta and GetAction never show a value the database does not hold.
  static Result<std::unique_ptr<Store>> OpenReadOnly(const std::string& path);
  // A Store on `db`, any backend of sql.h: a writable one is migrated as Open does, a
  // read-only one checked as OpenReadOnly does (a backend's Open makes the connection; a
  // test may wrap one). `submissions`, a second session on the same database (PostgreSQL),
  // commits SubmitNumbered's groups, so that they neither wait for the loop's session nor
  // for its transactions (store_submit.cc); without it they commit through `db`.
  static Result<std::unique_ptr<Store>> OpenOn(std::unique_ptr<Connection> db,
                                               std::unique_ptr<Connection> submissions = nullptr);
  ~Store();  // commits the writes still waiting (Flush)
  static int LatestSchemaVersion();
  int schema_version() const EXCLUDES(mu_);
  bool read_only() const { return read_only_; }

  // Accepts a new workload (state Pending, with a Pending transition) as a new row under
  // its uid. Workloads are namespaced by tenant: AlreadyExists only when the same tenant
  // has an unfinished workload of that name. A finished name may be submitted again; the
  // old row stays (history, attempts and decisions keep following its uid).
  Status Submit(const WorkloadRecord& record, Duration at);
  // (Submit neither numbers nor journals: the controller's submissions go through
  // SubmitNumbered.)
  // Submit with the uid `<name>-u<N>`, N from a counter kept in the same transaction.
  // Durable when it returns; returns the record as stored. Callers that arrive while
  // another group is under way are committed together (store_submit.cc): one transaction
  // and one fsync for up to kMaxSubmitGroup submissions, so a refused submission
  // (AlreadyExists: a live workload of the tenant and name, stored or in a group not yet
  // committed) refuses no other. With a submission journal set, the group's accepted
  // submissions and their `facts` go to it, with their uids, before the commit: when it
  // fails, none of them is stored and each gets its error.
  Result<WorkloadRecord> SubmitNumbered(WorkloadRecord record, Duration at, SubmissionFacts facts = {});
  static constexpr size_t kMaxSubmitGroup = 256;
  // Where SubmitNumbered journals what it accepts (the controller's audit journal), or
  // nothing (null). Called by the group's leader without the store's lock, once per group
  // and one group at a time; it must not submit (the group's commit waits for it). Whoever
  // sets it clears it before it goes.
  void SetSubmissionJournal(SubmissionJournal journal) EXCLUDES(numbering_mu_);
  // Submissions waiting for a group's leader to take them: the next group is at most these
  // (and kMaxSubmitGroup).
  size_t queued_submissions() const EXCLUDES(submit_mu_);
  // The tenant's newest workload of that name (unfinished, or the last finished one).
  Result<std::optional<WorkloadRecord>> Get(const std::string& tenant, const std::string& name);
  Result<std::optional<WorkloadRecord>> GetByUid(const std::string& uid);
  // Every tenant's newest workload of that name, by tenant (admin lookups by bare name).
  Result<std::vector<WorkloadRecord>> FindByName(const std::string& name);
  // All workloads, or one tenant's (empty: all), by submission order.
  Result<std::vector<WorkloadRecord>> List(const std::string& tenant = "");
  // The workloads that are not terminal (waiting and active), by submission order: a
  // pass reads these and never the finished history. Read once through an index, then
  // from a mirror that every committed write keeps (unfinished_rows.h).
  Result<std::vector<WorkloadRecord>> ListUnfinished();
  // The same into `*out`, reusing its records' storage: a loop that keeps the vector
  // between passes copies thousands of records without allocating their strings anew.
  Status ListUnfinishedInto(std::vector<WorkloadRecord>* out);
  // Per tenant, the decision estimates of its active (Placed, Running) workloads: all,
  // and on clouds (budgets, every pass; from the same mirror).
  Result<std::map<std::string, ActiveEstimate>> ActiveEstimates();
  // Workloads, their metered cost and GPUs per (tenant, state, currency), and the oldest
  // unfinished submission (metrics, dashboard): from totals that triggers keep in every
  // write's transaction (migration 6), so the finished history is never read.
  Result<std::vector<StateCount>> CountByState();
  // Workload records List and ListUnfinished returned so far (a statistic for tests and
  // benchmarks: what a pass costs in rows, not in time).
  int64_t rows_read() const { return rows_read_.load(std::memory_order_relaxed); }
  // Write transactions committed so far (each one fsync in a durable store): the same
  // kind of statistic, for what a pass costs in commits.
  int64_t commits() const { return commits_.load(std::memory_order_relaxed); }
  // What the commits cost in wall time, API group sizes and submission waits (/metrics).
  CommitStats::Snapshot commit_stats() const { return commit_stats_.Read(); }
  // Writes `record` (found by its uid); when its state differs from the stored one,
  // appends a transition with `reason` and `at`. NotFound when absent.
  Status Update(const WorkloadRecord& record, const std::string& reason, Duration at);
  Status RequestCancel(const std::string& uid);
  Result<std::vector<Transition>> History(const std::string& uid);

  Result<int64_t> RecordDecision(const DecisionRow& row);
  // One tenant's decisions for a workload name (every run of that name), newest first;
  // an empty workload: every decision of the tenant; both empty: every decision.
  // `limit` 0 = all.
  Result<std::vector<DecisionRow>> Decisions(const std::string& tenant, const std::string& workload, int limit = 0);

  // Write-ahead for connector actions: the intent is durable before the connector is
  // called. Re-recording an existing intent or applied action changes nothing (a
  // retry after a crash); a failed one is replaced (a new binding for the same key).
  Status RecordActionIntent(const ActionRow& row);
  // RecordActionIntent and Update in one transaction (one commit): a placement's intent
  // and the workload's new state become durable together, before the connector is called.
  Status RecordIntentAndUpdate(const ActionRow& row, const WorkloadRecord& record, const std::string& reason,
                               Duration at);
  // Every intent, then every update (as Update: a transition when the state or attempt
  // changes), in one transaction: a pass's placements and queued decisions commit
  // together, with one fsync. All or none.
  struct WorkloadUpdate {
    WorkloadRecord record;
    std::string reason;
    std::optional<Duration> at;  // when the change happened (unset: the call's `at`)
  };
  Status RecordIntentsAndUpdates(const std::vector<ActionRow>& intents, const std::vector<WorkloadUpdate>& updates,
                                 Duration at);
  // The same with the decisions' rows (`decisions`: RecordDecision's), in the transaction
  // of `commit` instead of one of the store's own: the decision rows, the intents and the
  // updates ride in it (store_riding.cc). The writes that wait do not: they keep waiting
  // for the store's own next commit, so that a ride stays as small as its rows. All or
  // none: a commit that failed after the rows were written has the unfinished mirror read
  // again (did they commit?). The store's lock is held throughout and lent to `commit`'s
  // thread while it runs them, so nothing else reads or writes the store between the rows
  // and their commit.
  Status RecordIntentsAndUpdatesWith(const RidingCommit& commit, const std::vector<DecisionRow>& decisions,
                                     const std::vector<ActionRow>& intents, const std::vector<WorkloadUpdate>& updates,
                                     Duration at);
  Status MarkAction(const std::string& kind, const std::string& key, ActionState state, const std::string& error);
  Result<std::vector<ActionRow>> Actions();
  Result<std::optional<ActionRow>> GetAction(const std::string& kind, const std::string& key);
  // The actions of `kind` among `keys`, by key (keys without one are absent); the same
  // rows GetAction gives, in a statement per few hundred keys.
  Result<std::map<std::string, ActionRow>> GetActions(const std::string& kind, std::span<const std::string> keys);

  // Books a finished attempt once per (uid, attempt) (later calls for the same attempt
  // are no-ops) and adds its cost and GPU time to the tenant's usage, in one transaction.
  // Keyed by uid, so every run of a reused name is metered and charged.
  Status FinishAttempt(const AttemptRow& a);
  Result<std::vector<AttemptRow>> Attempts() { return AttemptsAfter(StoreMark{}); }
  // The attempts booked after `mark`, in the order they were booked (store_mark.cc).
  Result<std::vector<AttemptRow>> AttemptsAfter(const StoreMark& mark);
  // Where the append-only tables end now (store_mark.cc).
  Result<StoreMark> Mark();
  // What the status history gained after `mark`: entries per state, and when each attempt
  // last began to run (store_mark.cc).
  Result<TransitionsAfterMark> TransitionsAfter(const StoreMark& mark);
  Result<std::map<std::string, UsageRow>> Usage();
  // Metered cost per tenant and UTC day of booking, for the days from the one holding
  // `since` on (schema 7): what budget periods sum, without reading the attempts.
  Result<std::vector<MeteredDayRow>> MeteredDays(Duration since);

  // Writes that wait for the store's next commit, saving an fsync each. The next write
  // of any kind but an API submission (SubmitNumbered's group commit: a submission does
  // not wait for the loop's rows) carries them in its own transaction; a read of a table they change
  // commits them first (GetMeta and GetAction read them where they wait instead; reads
  // of workloads never wait for them); Flush(), the destructor or the 257th waiting
  // write at the latest. Only for writes a crash may lose because the loop redoes them
  // or another record holds them:
  // - an action's outcome: an intent still marked so is applied again with the same key
  //   (what a crash between the connector call and the mark always did);
  // - a decision row: the audit journal holds the decision (appended and synced first);
  // - a finished attempt booked just before the Update that ends its workload: committed
  //   with that Update or lost with it, and then booked when the end is observed again;
  // - a meta value the loop writes again every pass (the fair-share ledger, a simulated
  //   run's clock): a restart resumes from the one before;
  // - a dashboard history sample.
  // A commit that fails drops them (they are never retried into a poisoned store).
  void MarkActionLater(const std::string& kind, const std::string& key, ActionState state, const std::string& error);
  void RecordDecisionLater(const DecisionRow& row);
  Status FinishAttemptLater(const AttemptRow& row);  // InvalidArgument without a uid
  // The newest value waits in place of an older one for the same key; GetMeta reads it.
  void SetMetaLater(const std::string& key, const std::string& value);
  void AppendHistoryLater(Duration at, const std::string& sample, Duration keep_from);
  Status Flush();
  // At most this many writes wait; one more commits them all.
  static constexpr size_t kMaxDeferred = 256;
  // Writes waiting now (a statistic for tests).
  size_t deferred_writes() const;

  // The dashboard's history (store_history.cc): appends a sample taken at `at` and, in the
  // same commit, drops the samples taken before `keep_from`; reads those taken at or
  // after `since`, oldest first.
  Status AppendHistory(Duration at, const std::string& sample, Duration keep_from);
  Result<std::vector<std::pair<Duration, std::string>>> ReadHistory(Duration since);

  Result<std::optional<std::string>> GetMeta(const std::string& key);
  // A time kept under `key` in whole milliseconds (the virtual clock's `clock_ms`): none
  // when the key is absent; DataLoss naming the key when the value is not a number from 0
  // to 10^13 (about 300 years), as an edited or damaged state folder may hold.
  Result<std::optional<Duration>> GetMetaMillis(const std::string& key);
  Status SetMeta(const std::string& key, const std::string& value);

 private:
  Store(std::unique_ptr<Connection> db, std::unique_ptr<Connection> submissions)
      : read_only_(db->read_only()), db_(std::move(db)), submit_db_(std::move(submissions)) {}
  // One write that waits (store_deferred.cc).
  struct DeferredWrite {
    struct Mark {
      std::string kind, key, error;
      ActionState state;
    };
    struct Meta {
      std::string key, value;
    };
    struct HistorySample {
      Duration at;
      std::string sample;
      Duration keep_from;
    };
    std::variant<Mark, DecisionRow, AttemptRow, Meta, HistorySample> write;
  };

  // The SQL of RecordDecision (the row's seq), MarkAction (the rows it marked) and
  // FinishAttempt.
  Result<int64_t> RecordDecisionLocked(Connection& db, const DecisionRow& row) REQUIRES(mu_);
  // The same rows when nobody reads their seq (a pass's decisions, the waiting writes):
  // in as few INSERTs as insert_batches.h allows, each riding with the next statement
  // (Statement::RunWithNext) in a transaction, so a pass's decisions cost no round trip
  // and no statement each on PostgreSQL.
  Status WriteDecisionsLocked(Connection& db, std::span<const DecisionRow> rows) REQUIRES(mu_);
  Result<int64_t> MarkActionLocked(Connection& db, const std::string& kind, const std::string& key, ActionState state,
                                   const std::string& error) REQUIRES(mu_);
  Status FinishAttemptLocked(Connection& db, const AttemptRow& a) REQUIRES(mu_);
  // Runs the waiting writes in the caller's transaction (dropping them on an error).
  Status ApplyDeferredLocked(Connection& db) REQUIRES(mu_);
  // Commits `tx` and forgets the waiting writes it carried; the workload rows it wrote
  // (WriteRecord's `written`) then join the unfinished mirror.
  Status CommitWithDeferred(Transaction& tx, std::vector<WorkloadRecord> written = {}) REQUIRES(mu_);
  // Commits `tx` and mirrors `written`, leaving the waiting writes waiting (the API's
  // group commit, which applies none of them).
  Status CommitRows(Transaction& tx, std::vector<WorkloadRecord> written, CommitStats::Writer writer) REQUIRES(mu_);
  // The unfinished mirror, loaded from the database when it is not.
  Status LoadUnfinishedLocked() REQUIRES(mu_);
  // Commits the waiting writes in a transaction of their own (none waiting: nothing).
  Status FlushLocked() REQUIRES(mu_);
  // The same when a write of kind W waits (a read of W's table must see it).
  template <typename W>
  Status FlushLockedIfWaiting() REQUIRES(mu_) {
    for (const DeferredWrite& d : deferred_) {
      if (std::holds_alternative<W>(d.write)) return FlushLocked();
    }
    return Status::Ok();
  }
  Status SetMetaLocked(Connection& db, const std::string& key, const std::string& value) REQUIRES(mu_);
  Status AppendHistoryLocked(Connection& db, Duration at, const std::string& sample, Duration keep_from) REQUIRES(mu_);
  void DeferLocked(DeferredWrite write) REQUIRES(mu_);
  Status Migrate() EXCLUDES(mu_);
  // Reads the schema version and the last submission order.
  Status ReadVersionLocked() REQUIRES(mu_);
  Status ReadSeqLocked() REQUIRES(mu_);
  // Inserts a workload row on `db` (the store's session, or the submissions' for a
  // group's rows); appends the row as stored to `written`.
  Status InsertRecord(Connection& db, const WorkloadRecord& r, std::vector<WorkloadRecord>* written);
  // Sets the mutable columns of existing rows (one per uid) from `rows`, in as few
  // UPDATEs as insert_batches.h allows, each sent with the next statement.
  static Status UpdateRows(Connection& db, std::span<const WorkloadRecord> rows);
  // `with_next`: sent with the next statement (Statement::RunWithNext), its error that one's.
  static Status AddTransition(Connection& db, const Transition& t, bool with_next = false);
  // Many history rows, in order, in as few INSERTs as `batching` allows, each sent with
  // the next statement.
  static Status AddTransitions(Connection& db, std::span<const Transition> transitions, Batching batching);
  Result<std::optional<WorkloadRecord>> GetLocked(const std::string& tenant, const std::string& name) REQUIRES(mu_);
  // The writes of Submit, Update and RecordActionIntent (the first two in the caller's
  // transaction).
  Status SubmitLocked(const WorkloadRecord& record, Duration at, std::vector<WorkloadRecord>* written) REQUIRES(mu_);
  // SubmitLocked's writes without its check, on `db`: a group's submissions were checked
  // when they were numbered (a row that appeared since, from another Store, is refused by
  // the workloads_live_name index: AlreadyExists).
  Status InsertSubmission(Connection& db, const WorkloadRecord& record, Duration at,
                          std::vector<WorkloadRecord>* written, bool with_next = false);
  // InsertSubmission's rows for many submissions, in one INSERT per table for up to 64
  // rows and 8 MiB of text (insert_batches.h), each sent with the next statement: the caller's next statement
  // answers for them all, and one refused row fails every row of its statement.
  struct NewSubmission {
    const WorkloadRecord* record;
    Duration at;
  };
  Status InsertSubmissions(Connection& db, std::span<const NewSubmission> submissions,
                           std::vector<WorkloadRecord>* written);
  // `record` as an update writes it: its identity from the row as it stands (the last
  // of `written` with its uid, else the mirror's, else the database's); a change of state
  // or attempt appends its history row to `transitions`.
  Result<WorkloadRecord> ChangeOfLocked(const WorkloadRecord& record, const std::string& reason, Duration at,
                                        const std::vector<WorkloadRecord>& written,
                                        std::vector<Transition>* transitions) REQUIRES(mu_);
  Status RecordIntentLocked(Connection& db, const ActionRow& row) REQUIRES(mu_);
  // In a transaction on `db`: `decisions`, `intents` and `updates` (the rows written in
  // `*written`).
  Status WriteDecisionsIntentsAndUpdatesLocked(Connection& db, const std::vector<DecisionRow>& decisions,
                                               const std::vector<ActionRow>& intents,
                                               const std::vector<WorkloadUpdate>& updates, Duration at,
                                               std::vector<WorkloadRecord>* written) REQUIRES(mu_);
  // The first workload row matching `where` ($1, and $2 when `second` is not empty).
  Result<std::optional<WorkloadRecord>> GetOne(const std::string& where, const std::string& first,
                                               const std::string& second) REQUIRES(mu_);
  // SELECT of workloads with `where` (may hold $1, bound to `bind`), by seq.
  Result<std::vector<WorkloadRecord>> Query(const std::string& where, const std::string& bind) EXCLUDES(mu_);
  Result<std::vector<WorkloadRecord>> QueryLocked(const std::string& where, const std::string& bind) REQUIRES(mu_);

  // Group commit of SubmitNumbered (store_submit.cc): callers queue; the first one (the
  // leader) takes everything queued, numbers it (under numbering_mu_, from the live names;
  // under mu_ too only when the mirror or the counter must be loaded), has the submission
  // journal take it (without any lock) and then, in its turn, commits it (on the
  // submissions' session when there is one, without mu_), while later arrivals queue for
  // the next group, whose leader may number and journal it meanwhile.
  struct QueuedSubmit;
  struct SubmitGroup;
  void NumberSubmits(SubmitGroup& group) EXCLUDES(mu_, submit_mu_, numbering_mu_);
  // Numbers the group from the live names; false (nothing numbered) when they are not
  // loaded or the mirror must be read again.
  bool NumberFromLiveNamesLocked(SubmitGroup& group) REQUIRES(numbering_mu_);
  // The journal takes the group, and with it its rows when it can (SubmissionJournal).
  Status JournalSubmits(SubmitGroup& group) EXCLUDES(mu_, submit_mu_);
  // Writes the group's accepted rows (or, when `journalled` failed, only its counter)
  // unless the journal's transaction did, and brings the in-flight names and the mirror's
  // queue up to date with what is stored.
  void CommitSubmits(SubmitGroup& group, const Status& journalled) EXCLUDES(mu_, submit_mu_, numbering_mu_);
  // The queue's hand-offs (store_submit.cc): whether `me` may lead the next group now;
  // the queue front's wake-up when it may (to be signalled once submit_mu_ is let go).
  struct Wakeup;
  bool MayLeadLocked(const QueuedSubmit& me) const REQUIRES(submit_mu_);
  std::shared_ptr<Wakeup> NextLeaderLocked() const REQUIRES(submit_mu_);
  // A submission's result, once its wait in the queue is counted.
  Result<WorkloadRecord> Finish(Result<WorkloadRecord> result, std::chrono::steady_clock::time_point queued);
  // The transaction of CommitSubmits on `db`: WriteGroupRows, then COMMIT.
  void WriteGroup(Connection& db, SubmitGroup& group, std::vector<WorkloadRecord>* written, bool* counter_moved);
  // Inside an open transaction: each accepted row and the counter; the rows it wrote in
  // `written`. True in `*counter_moved` when another writer took numbers. An error fails
  // every accepted submission (the caller rolls back). `refused`: RidingWrites'.
  Status WriteGroupRows(Connection& db, SubmitGroup& group, std::vector<WorkloadRecord>* written, bool* counter_moved,
                        RefusedRidingWrite refused);
  // Every accepted row of the group and then the counter, under one savepoint (on
  // PostgreSQL one round trip, not one per submission); true when all were written.
  // False, with nothing of them left, when a row was refused or the counter had moved:
  // WriteGroupRows then writes the counter and the rows one by one.
  bool WriteGroupRowsAtOnce(Connection& db, SubmitGroup& group, std::vector<WorkloadRecord>* written);
  // WriteGroupRows with kFailsTheCommit (PostgreSQL): the rows and the counter sent with
  // the commit's next statement, no reply waited for, no savepoint; any error is returned
  // as it is (the commit fails and calls the writes again), no member's result changed.
  Status WriteGroupRowsUnanswered(Connection& db, SubmitGroup& group, std::vector<WorkloadRecord>* written);
  // Moves the uid counter past the group's numbers when no other writer did: false when
  // one had.
  static Result<bool> TakeUidNumbers(Connection& db, const SubmitGroup& group);
  // The same, sent with the next statement, and refused by the database (failing its
  // transaction) when another writer had moved the counter. PostgreSQL only.
  static Status MoveUidCounterOrRefuse(Connection& db, const SubmitGroup& group);
  // uid_counter_ from the meta row, once (read on the store's session).
  Status LoadUidCounterLocked() REQUIRES(mu_);
  // Brings the mirror up to date with the groups committed since it was last read: forgets
  // it when a group's COMMIT had an unknown outcome, else applies their rows (which then
  // leave submits_in_flight_). Run before the mirror is read or changed.
  void SyncSubmissionsLocked() REQUIRES(mu_);
  // Guards the queue, the leader flag and the commit order only; never held with mu_ (a
  // submission waits in the queue without holding up the store).
  mutable Mutex submit_mu_;
  CondVar commit_turn_cv_;  // commit_turn_ moved (a queued submission waits on its own)
  std::deque<QueuedSubmit*> submit_queue_ GUARDED_BY(submit_mu_);
  bool submit_leader_ GUARDED_BY(submit_mu_) = false;
  // Groups commit in the order they were numbered: each gets a ticket, and commits when
  // commit_turn_ reaches it.
  uint64_t next_commit_ticket_ GUARDED_BY(submit_mu_) = 0;
  uint64_t commit_turn_ GUARDED_BY(submit_mu_) = 0;

  // Lock order: mu_, then numbering_mu_, then live_names_'s own; submit_db_mu_ is never
  // held with another.
  mutable FairMutex mu_;  // every method; FIFO, so API writes are not starved by a pass
  std::vector<DeferredWrite> deferred_ GUARDED_BY(mu_);  // in the order they were asked for
  // What numbering a group reads and writes, apart from the store's lock.
  Mutex numbering_mu_;
  SubmissionJournal submission_journal_ GUARDED_BY(numbering_mu_);
  // The last uid number given (the meta row `uid_counter` once loaded, then ahead of it
  // while groups are between numbering and commit). A group whose journal or COMMIT failed
  // leaves the stored counter behind this, so no uid is ever given twice by one process.
  std::optional<int64_t> uid_counter_ GUARDED_BY(numbering_mu_);
  // Key(tenant, name) of the submissions numbered and not yet in the mirror (committing,
  // or committed and waiting in committed_submits_): a second one of the same name is
  // refused as if the first were stored.
  std::set<std::string> submits_in_flight_ GUARDED_BY(numbering_mu_);
  // Rows of groups committed since the mirror was last synchronised, in commit order.
  std::vector<WorkloadRecord> committed_submits_ GUARDED_BY(numbering_mu_);
  // A group's COMMIT failed after writing rows (did they commit?): the mirror is read again.
  bool mirror_unsure_ GUARDED_BY(numbering_mu_) = false;
  LiveNames live_names_;  // the mirror's names, with a lock of its own
  UnfinishedRows unfinished_ GUARDED_BY(mu_){&live_names_};
  const bool read_only_;  // the database's, which never changes
  std::unique_ptr<Connection> db_ PT_GUARDED_BY(mu_);  // every statement runs under mu_
  // The submissions' own session (PostgreSQL), or null: one group commits at a time.
  Mutex submit_db_mu_;
  std::unique_ptr<Connection> submit_db_ PT_GUARDED_BY(submit_db_mu_);
  int version_ GUARDED_BY(mu_) = 0;
  // The last submission order given: inserts on either session take the next one.
  std::atomic<int64_t> seq_{0};
  std::atomic<int64_t> rows_read_{0};
  std::atomic<int64_t> commits_{0};
  CommitStats commit_stats_;
};

}  // namespace gpufed::store
