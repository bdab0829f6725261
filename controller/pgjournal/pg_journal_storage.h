#pragma once
// The audit journal in a PostgreSQL table (issue 38): JournalStorage over one
// pg::Connection. Each commit is one INSERT of all its rows in one transaction (fenced,
// when a fence is given), so a commit is stored whole or not at all and no torn tail can
// exist; the table's triggers refuse UPDATE, DELETE and TRUNCATE (schema.h). The lines,
// the chain and the checkpoints are the file journal's, byte for byte.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "controller/audit/journal_storage.h"
#include "controller/common/status.h"
#include "controller/pg/connection.h"
#include "controller/pg/transaction.h"

namespace gpufed::pgjournal {

struct PgJournalStorageOptions {
  // Run inside every write transaction right after BEGIN, before the INSERT, and in
  // Recover (taking the writer role is the fence passing). A failing fence fails the
  // call with its status and nothing is written. The runtime passes ha::DeferFenceCheck
  // with the leader's FenceToken, which sends the check with the INSERT (one round trip;
  // a refusal fails the INSERT, or the COMMIT, with the fence's status):
  //   [token](pg::Transaction& tx) { return ha::DeferFenceCheck(tx, token); }
  // It gets the transaction, not the bare connection, because the check locks the lease
  // row FOR SHARE inside the caller's transaction until it commits.
  // Empty: the writer role is a session advisory lock instead (one writer per database;
  // a lock a paused process keeps would block a failover, so HA passes a fence).
  std::function<Status(pg::Transaction&)> fence;
  // Recover first migrates the table (MigrateJournal): for a connection of the owner
  // role. False for the controller's role (INSERT and SELECT only), which checks the
  // schema's version instead (CheckJournalSchema).
  bool migrate = true;
};

// The commit's transaction as lent to audit::RidingWork: the writes it runs go through
// `transaction` (or its connection), inside the journal's fenced transaction, before its
// COMMIT. Never commits or rolls back itself.
class PgCommitScope final : public audit::CommitScope {
 public:
  PgCommitScope(pg::Transaction& transaction, bool refusal_fails_commit)
      : transaction_(transaction), refusal_fails_commit_(refusal_fails_commit) {}
  pg::Transaction& transaction() { return transaction_; }
  // A rerunnable work's first run (audit::RidingWork): its writes need not be answered
  // before it returns, and nothing is undone alone (it has no savepoint): a write the
  // server refuses, or an error the work returns, fails the whole commit, which is then
  // run again with this false. False: the work runs in a savepoint, a write left
  // unanswered is answered before the next work, and its refusal undoes this work alone.
  bool refusal_fails_commit() const { return refusal_fails_commit_; }

 private:
  pg::Transaction& transaction_;
  const bool refusal_fails_commit_;
};

// The transaction of a scope a PgJournalStorage lent; null for another storage's.
pg::Transaction* TransactionOf(audit::CommitScope& scope);
// Whether a refused write in that scope fails the whole commit (PgCommitScope's); false
// for another storage's scope.
bool RefusalFailsCommit(audit::CommitScope& scope);

class PgJournalStorage final : public audit::JournalStorage {
 public:
  PgJournalStorage(std::unique_ptr<pg::Connection> connection, PgJournalStorageOptions options);
  // Releases the advisory lock (by closing the session). Writes nothing.
  ~PgJournalStorage() override;
  PgJournalStorage(const PgJournalStorage&) = delete;
  PgJournalStorage& operator=(const PgJournalStorage&) = delete;

  // Migrates (or checks the schema), takes the writer role (the fence, or the advisory
  // lock: FailedPrecondition when another session holds it), reads the head and walks
  // from the last checkpoint row to it with the file journal's checks
  // (audit/journal_checks.h): self-hashes, chain, with keys.signer the checkpoint's key,
  // origin and signed tree, whose frontier gives the tree of every stored record without
  // reading the rows before it. Records after the last checkpoint (a table holds no torn
  // commit) or unsigned records under a signer: FailedPrecondition; damage: DataLoss.
  Result<audit::JournalHead> Recover(const audit::RecoveryKeys& keys, audit::MerkleHasher& merkle,
                                     audit::RecoveryInfo* info) override;
  // BEGIN, the fence, one INSERT ... SELECT FROM unnest(...) of every line, COMMIT.
  // FailedPrecondition without the writer role, for a first_seq that does not follow
  // the head, or from the fence; AlreadyExists when another writer stored that seq (the
  // primary key); Unavailable (the outcome unknown) when the connection is lost.
  Status AppendCommit(std::string_view lines, uint64_t first_seq) override;
  // AppendCommit with each work run after the INSERT, before the COMMIT, in a savepoint of
  // its own (SAVEPOINT, its writes, RELEASE; ROLLBACK TO when it fails, which then undoes
  // only its writes): the records and the work's writes are one durable commit. When
  // every work is rerunnable the commit is first sent whole with its COMMIT, one round
  // trip; if the server refuses any of it, nothing is stored and the commit is run again
  // as above, unless the session was lost or a statement timed out.
  bool CarriesWork() const override { return true; }
  Status AppendCommitWith(std::string_view lines, uint64_t first_seq,
                          std::span<audit::RidingWork* const> riding) override;
  Status Close() override;

 private:
  Status TakeWriterRole();
  Result<audit::JournalHead> ReadAndCheck(const audit::RecoveryKeys& keys, audit::MerkleHasher& merkle);
  // One transaction: BEGIN, the fence, the INSERT of the rows (`insert`: its parameters),
  // each work in its savepoint, COMMIT.
  Status StoreCommit(const std::vector<pg::Param>& insert, std::span<audit::RidingWork* const> riding,
                     bool refusal_fails_commit);

  std::unique_ptr<pg::Connection> connection_;
  const PgJournalStorageOptions options_;
  bool writer_ = false;
  bool advisory_locked_ = false;
  uint64_t head_seq_ = 0;
  std::string head_hash_;
};

// The session advisory lock of the journal's writer when no fence is given.
inline constexpr int64_t kJournalWriterLockKey = 0x67707566656a6c;  // "gpufejl"

}  // namespace gpufed::pgjournal
