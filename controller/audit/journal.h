#pragma once
// The audit journal: the controller's write-ahead log. A decision is appended (and
// durable) before any connector acts on it.
//
// The lines are kept by a JournalStorage (journal_storage.h): Open uses the file journal
// (file_journal_storage.h: `<dir>/journal/<first seq, 20 digits>.log` segments of
// newline-terminated record lines, `journal/LOCK`; docs/audit-format.md). Records are hash-chained
// (each carries the previous record's hash) and are the leaves of an RFC 9162 Merkle tree
// (merkle.h). When a Signer is configured every commit ends with a checkpoint record, a
// C2SP signed note over the tree of every record before it, in the same write: no
// record is acknowledged before a signature covers it (sign-ahead).
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "controller/audit/env.h"
#include "controller/audit/journal_storage.h"
#include "controller/audit/merkle.h"
#include "controller/audit/record.h"
#include "controller/audit/signed_note.h"
#include "controller/audit/signing.h"
#include "controller/audit/tile_store.h"
#include "controller/common/mutex.h"
#include "controller/common/status.h"

namespace gpufed::audit {

// A record line must fit a tlog-tiles entry (a 16-bit length): its payload is at most this
// many bytes, which leaves room for the header, hash and the longest controller id.
inline constexpr size_t kMaxRecordPayloadBytes = 65'000;

struct JournalOptions {
  Env* env = nullptr;              // required; must outlive the journal
  std::string dir;                 // the audit folder; Open's file journal is its `journal/`
  std::string controller_id = "gpufed";  // [A-Za-z0-9._:-]+, stamped on every record
  uint64_t segment_bytes = uint64_t{64} << 20;  // Open's file journal: rotate once a segment reaches this size
  size_t max_group_bytes = size_t{8} << 20;     // bytes one group commit writes at most
  const Signer* signer = nullptr;  // null: no checkpoints; must outlive the journal
  // The log's name in its checkpoints (tlog-checkpoint origin, signed-note key name);
  // empty: "gpufed/<controller_id>". No spaces, no '+'.
  std::string log_origin;
  uint64_t checkpoint_every = 1000;  // records between checkpoints inside one large commit
  // Only `gpufed audit rotate-key` (key_rotation.h) sets it, to the old key, when it opens
  // the journal with the new key to write the handover's second signature: the open then
  // accepts a rotation from this key to `signer` that `signer` has not signed yet (any
  // other open refuses it and says to run rotate-key again). Must outlive the open.
  const Signer* rotation_from = nullptr;
};

class AuditJournal {
 public:
  // Opens (or creates) the journal, takes its lock, and recovers: the last segment is
  // scanned (journal_recovery.cc). The journal is evidence, so the only repair is of a
  // torn commit: an incomplete last line and, with a signer, the complete records of the
  // commit it belongs to (one time stamp, after the last checkpoint: a crash inside a
  // write no Append acknowledged). Those bytes are first copied to <dir>/quarantine/,
  // then cut off, and the caller is told (RecoveryInfo) so it can journal the repair.
  // Any complete line that is damaged, out of order or out of the chain is DataLoss; a
  // checkpoint that does not sign the tree before it, or is of another key or origin, and
  // records after the last checkpoint that are not one torn commit (or follow a clean
  // close without a controller-start) refuse the open too. A refused open changes no
  // byte; `gpufed audit verify` names the damage and the operator decides.
  // FailedPrecondition when another writer holds the lock.
  static Result<std::unique_ptr<AuditJournal>> Open(const JournalOptions& options, RecoveryInfo* info = nullptr);
  // Open on another storage (options.dir and segment_bytes then serve only dir()): the
  // storage's Recover does what Open's file journal does above, as its contract says.
  // InvalidArgument without an Env or a storage.
  static Result<std::unique_ptr<AuditJournal>> OpenWith(const JournalOptions& options,
                                                        std::unique_ptr<JournalStorage> storage,
                                                        RecoveryInfo* info = nullptr);

  // Releases the files and the lock. Never writes: call Close() for the final
  // checkpoint (a destructor that ran after a refused open once overwrote evidence).
  ~AuditJournal();
  AuditJournal(const AuditJournal&) = delete;
  AuditJournal& operator=(const AuditJournal&) = delete;

  // Appends one record and returns its sequence number once it is durable (written and
  // fdatasync'ed). Concurrent callers are committed together: one write, one fdatasync.
  // Thread-safe. Errors: InvalidArgument for a payload that uses a header key; after
  // any write or sync failure the journal is failed for good (ResourceExhausted for a
  // full disk, PermissionDenied, Internal) and every later call returns that error:
  // the caller must stop acting (see health()).
  Result<uint64_t> Append(const AuditRecord& record) EXCLUDES(mu_);
  // Appends records in order with one fdatasync; returns the last seq, and each record's
  // in `seqs` when given (a checkpoint the journal signs may fall between two of them).
  // `riding`: work that commits in the same transaction as the records (journal_storage.h's
  // RidingWork; only where carries_work()): OK then means the records are durable, and
  // `riding->result` says whether the work's writes are too. FailedPrecondition, nothing
  // appended, for work on a storage that cannot carry it.
  Result<uint64_t> AppendBatch(std::span<const AuditRecord> records, std::vector<uint64_t>* seqs = nullptr,
                               RidingWork* riding = nullptr) EXCLUDES(mu_);
  // Whether the storage commits RidingWork with the records (a PostgreSQL table: yes; the
  // file journal: no).
  bool carries_work() const { return storage_->CarriesWork(); }

  // Signs the current head now if records no checkpoint covers wait (only an older
  // journal's tail can: every commit is signed).
  Status Checkpoint() EXCLUDES(mu_);
  // Checkpoint() with a signer, OK without one. The reconcile loop calls it on its tick.
  Status MaybeCheckpoint() EXCLUDES(mu_);
  // Signs the whole tree with this journal's key even when the head is signed already:
  // the new key's checkpoint over a key rotation the old key signed (key_rotation.h).
  // FailedPrecondition without a signer.
  Status Countersign() EXCLUDES(mu_);

  // Final checkpoint, then the segment is closed and the lock released. Later appends
  // return FailedPrecondition. Idempotent.
  Status Close() EXCLUDES(mu_);

  // OK while appends can succeed; else the sticky error. For /readyz.
  Status health() const EXCLUDES(mu_);
  uint64_t last_seq() const EXCLUDES(mu_);  // durable head
  // The newest signed checkpoint this journal holds (seq 0: none seen since it was
  // opened; the file journal's open looks for one in the last segment only).
  using CheckpointMark = audit::CheckpointMark;
  CheckpointMark last_checkpoint() const EXCLUDES(mu_);
  std::string last_hash() const EXCLUDES(mu_);  // hash of the durable head (genesis zeros if empty)
  const std::string& dir() const { return options_.dir; }
  std::string log_origin() const;
  // The tree's size and root, for opening its tile store. Only while nothing is being
  // appended (after Open, before the first append): FailedPrecondition otherwise, or
  // without a signer (no tree is kept).
  Result<std::pair<uint64_t, MerkleHash>> TreeHead() const EXCLUDES(mu_);
  // Each commit's leaf hashes go to `tiles` once written. Call before the first append;
  // `tiles` must outlive the journal. Its failures never fail an append: tiles are
  // derived data (tile_store.h).
  void AttachTiles(TileStore* tiles) EXCLUDES(mu_);

 private:
  struct Writer;
  explicit AuditJournal(const JournalOptions& options);
  // Open's: the storage's recovery, whose head appends continue from. On a journal no
  // other thread can reach yet; it holds mu_ all the same, so that every write of the
  // guarded head is under it.
  Status Recover(RecoveryInfo* info) REQUIRES(mu_);
  Result<uint64_t> Commit(Writer* w) EXCLUDES(mu_);
  // Encodes the group into `out`; updates the pending chain state `*seq`, `*hash`.
  void EncodeGroup(const std::vector<Writer*>& group, int64_t now, std::string* out, uint64_t* seq, std::string* hash,
                   uint64_t* since_checkpoint, int64_t* last_checkpoint_time);
  void AppendCheckpoint(int64_t now, std::string* out, uint64_t* seq, std::string* hash);
  // Encodes one line into `out` and adds it to the tree; returns its hash.
  std::string_view EncodeLine(uint64_t seq, int64_t now, std::string_view kind, std::string_view prev,
                              std::string_view payload, std::string* out);

  const JournalOptions options_;
  Env* const env_;

  mutable Mutex mu_;
  std::deque<Writer*> writers_ GUARDED_BY(mu_);  // the front one is the leader
  Status health_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  bool recovered_ GUARDED_BY(mu_) = false;  // Recover succeeded: only then may anything be written
  uint64_t last_seq_ GUARDED_BY(mu_) = 0;
  std::string last_hash_ GUARDED_BY(mu_);
  CheckpointMark last_checkpoint_ GUARDED_BY(mu_);
  TileStore* tiles_ GUARDED_BY(mu_) = nullptr;
  std::atomic<size_t> payload_bytes_hint_{0};  // bytes per payload of the last call

  // Touched only by the current leader (one at a time, handed over under mu_), which
  // works on them with mu_ let go: a protocol the analysis cannot follow, so these carry
  // no GUARDED_BY.
  std::unique_ptr<JournalStorage> storage_;  // Recover'ed in Open; Close'd by Close
  uint64_t since_checkpoint_ = 0;
  int64_t last_checkpoint_time_ = 0;
  RecordLineEncoder encoder_;
  CompactRange range_;  // the tree of every record written
  std::vector<MerkleHash> group_leaves_;  // the leaves of the group being written
  std::string group_note_;                // the group's last checkpoint note
  MerkleHasher merkle_hasher_;
  std::unique_ptr<NoteSigner> note_signer_;  // with a signer
  // The group being encoded and written; its capacity (about max_group_bytes at most)
  // is kept for the next group.
  std::string group_buffer_;
};

}  // namespace gpufed::audit
