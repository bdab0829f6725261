#pragma once
// Where the audit journal's records are kept: the one seam between the journal (chain,
// checkpoints, group commit: journal.h) and its storage. The file journal
// (file_journal_storage.h: segments under `<audit>/journal/`) is the first
// implementation; a PostgreSQL table (issue 38) is meant to be the second. Everything a
// storage does not appear here (segments, rotation, a torn tail's quarantine, archiving)
// belongs to its implementation.
//
// What is stored is the record lines exactly as docs/audit-format.md gives them, one per
// record, in seq order, each line's bytes unchanged: the chain, the checkpoints and every
// reader's checks are the same whatever keeps the lines.
//
// The journal is evidence: a storage offers no way to change or remove a line that was
// acknowledged. The file storage's one repair (a torn commit that no append
// acknowledged, cut to quarantine) happens inside Recover and is reported, never asked for.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "controller/audit/merkle.h"
#include "controller/audit/record.h"
#include "controller/audit/signing.h"
#include "controller/common/status.h"

namespace gpufed::audit {

// What an open found and repaired.
struct RecoveryInfo {
  uint64_t last_seq = 0;          // head of the chain after recovery (0: empty journal)
  uint64_t truncated_bytes = 0;   // torn tail removed from the last segment
  uint64_t dropped_lines = 0;     // lines in that torn tail (never acknowledged)
  std::string quarantined;        // where the torn bytes were copied before the truncation
  // Complete records of a torn commit cut with the tail (never acknowledged: the commit's
  // checkpoint was not written); 0 when only a partial line was cut.
  uint64_t first_dropped_seq = 0, last_dropped_seq = 0;
  int segments = 0;  // segments of the file journal after recovery (0 for other storages)
};

// The newest signed checkpoint a journal holds.
struct CheckpointMark {
  uint64_t seq = 0;  // 0: none found
  int64_t time_micros = 0;
  std::string note;  // its signed note (v2 checkpoints; empty for older ones)
};

// What recovery checks the stored checkpoints against.
struct RecoveryKeys {
  const Signer* signer = nullptr;  // null: no tree is recovered, no checkpoint checked
  // The old key of a key rotation this open may complete (JournalOptions::rotation_from).
  const Signer* rotation_from = nullptr;
  std::string origin;  // the log's name in its checkpoints
};

// Where appends continue after recovery.
struct JournalHead {
  uint64_t last_seq = 0;                        // 0: nothing stored
  std::string last_hash = std::string(kGenesisHash);  // the hash the next record's prev names
  uint64_t since_checkpoint = 0;                // records after the newest checkpoint recovery saw
  CheckpointMark last_checkpoint;               // seq 0 when recovery saw none
  CompactRange tree;                            // with a signer: the tree of every stored record
};

// The transaction a commit's lines are stored in, as lent to work that commits with them
// (RidingWork). Opaque here: what it is depends on the storage (a PostgreSQL table's is
// pgjournal::PgCommitScope); only code that knows the storage looks inside.
class CommitScope {
 public:
  virtual ~CommitScope() = default;
};

// Work that commits in the same transaction as the records it is appended with
// (AuditJournal::AppendBatch's `riding`): the store's rows of a submission group, or of a
// pass's decisions, so that the records and the rows are one durable commit, not two. `run` is called on the
// journal's group-commit leader's thread, after the commit's lines are written and before
// its COMMIT, inside a savepoint: an error it returns undoes only its own writes, which
// `result` then holds, and the records still commit. A COMMIT that fails fails the work's
// append with the commit's error (the work's writes then committed or not with the
// records: the outcome may be unknown).
//
// `rerunnable` work may be run twice: a storage may then run it first with its writes'
// replies left unread until the COMMIT (the PostgreSQL table's: the whole commit in one
// round trip, where waiting for the work's replies before the COMMIT took two), so that
// a refused write fails the whole commit rather than the work alone; nothing of that
// commit is stored, and the storage runs the commit again, the work with it, as above.
// The work learns which way it runs from its scope (pgjournal::RefusalFailsCommit), and a
// second run must write everything afresh.
struct RidingWork {
  std::function<Status(CommitScope&)> run;
  bool rerunnable = false;
  Status result;  // set by the storage: run's status, or the error that kept it from running
};

// The writer's side. Not thread-safe: the journal calls it from one thread at a time (its
// group commit's leader), and no other object may write the same journal.
class JournalStorage {
 public:
  virtual ~JournalStorage() = default;

  // Makes this object the journal's one writer, checks what is stored and returns the
  // head that appends continue from. Called once, before any AppendCommit.
  // - The writer role: FailedPrecondition while another writer holds it (the file: the
  //   flock on `journal/LOCK`; a table: the lease whose epoch the writer's transactions
  //   check). It is held until Close or destruction.
  // - Checks: every stored line of the recovered range is self-hashed and chained; with
  //   `keys.signer` every checkpoint from the last signed one on signs the tree before it
  //   with the key in force and the origin, and what follows the last checkpoint is at
  //   most one torn commit. Damage is DataLoss, anything else not written by this journal
  //   FailedPrecondition; a refused recovery changes nothing stored.
  // - Repair, the one exception to "nothing but an append writes": a commit that a crash
  //   tore (a partial line, or the complete records of one commit its checkpoint never
  //   signed) was never acknowledged; the file storage copies it to quarantine, cuts it
  //   off and says so in `info`. A table commits all of a commit or nothing, so no torn
  //   tail can exist: it only re-checks the chain from the last checkpoint.
  virtual Result<JournalHead> Recover(const RecoveryKeys& keys, MerkleHasher& merkle, RecoveryInfo* info) = 0;

  // Stores one commit: `lines` is one or more complete record lines, each ending with
  // '\n', the first of them seq `first_seq` (the head's last_seq + 1), chained to the head.
  // OK means durable: every line survives a crash (the file: written and fdatasync'ed; a
  // table: one INSERT of the commit's rows in the writer's fenced transaction,
  // committed). All or nothing: after a crash either every line of the commit is there or
  // none is acknowledged (the file may hold a torn part of it, which Recover cuts). After
  // an error the stored state is unknown (a retried fsync may falsely succeed): the caller
  // must append nothing more through this object (the journal fails for good) and reopen.
  // ResourceExhausted for a full disk, PermissionDenied, Internal; a table also
  // FailedPrecondition when the writer role was lost (a deposed leader).
  virtual Status AppendCommit(std::string_view lines, uint64_t first_seq) = 0;

  // Whether AppendCommitWith can run work in a commit's transaction (a table's storage).
  virtual bool CarriesWork() const { return false; }
  // AppendCommit, and `riding` in the same transaction, each as RidingWork says. A storage
  // that cannot carry work (the file journal) refuses any: FailedPrecondition, nothing stored.
  virtual Status AppendCommitWith(std::string_view lines, uint64_t first_seq, std::span<RidingWork* const> riding) {
    if (!riding.empty())
      return FailedPrecondition("this journal's storage cannot commit other writes with its records");
    return AppendCommit(lines, first_seq);
  }

  // Releases the writer role; later AppendCommits fail. Never writes a record (the
  // journal writes its closing checkpoint before). Idempotent.
  virtual Status Close() = 0;
};

// A record as a reader sees it.
struct JournalEntry {
  uint64_t seq = 0;
  int64_t time_micros = 0;
  std::string kind;
  std::string hash;
  std::string line;  // the record line, without the newline
};

// The readers' side: records in seq order from a seq, in bounded memory, beside a live
// writer (shippers, query, report, replay, prove, the tile store's rebuild). Each line is
// self-checked (ParseRecordLine); checks across records are the Verifier's. Not
// thread-safe; one per reader. Never takes the writer role and never writes.
class JournalRecordSource {
 public:
  virtual ~JournalRecordSource() = default;

  // The next entry returned will be `seq` (or the first stored one after it: a journal
  // whose older records were archived begins after seq 1). Seek(0) is Seek(1).
  virtual Status Seek(uint64_t seq) = 0;
  // Appends up to `max` entries with seq <= `limit`, in seq order, and returns how many;
  // 0 when nothing more is stored yet (a later call sees what acknowledged appends have
  // stored since). DataLoss for a damaged record (naming where it is) and for a gap after
  // the first entry returned since Seek. A table: SELECT ... WHERE seq >= next AND seq <=
  // limit ORDER BY seq LIMIT max.
  virtual Result<size_t> Next(size_t max, uint64_t limit, std::vector<JournalEntry>* out) = 0;
};

// Makes a new reader of one journal, for a reader that needs one of its own (a tile
// store catching up, an entry bundle, a shipper): the file journal's JournalReader, or a
// table's source on a connection of its own.
using JournalSourceFactory = std::function<std::unique_ptr<JournalRecordSource>()>;

}  // namespace gpufed::audit
