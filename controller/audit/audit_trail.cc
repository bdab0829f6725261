#include "controller/audit/audit_trail.h"

#include "controller/audit/archive_env.h"
#include "controller/audit/file_snapshot_store.h"
#include "controller/audit/reader.h"
#include "controller/audit/records.h"
#include "controller/audit/signing_key.h"

namespace gpufed::audit {

Result<std::unique_ptr<AuditTrail>> AuditTrail::Open(const AuditTrailOptions& options) {
  std::unique_ptr<AuditTrail> trail(new AuditTrail());
  trail->dir_ = options.dir;
  trail->env_ = options.env;
  if (trail->env_ == nullptr) {
    trail->own_env_ = NewPosixEnv();
    trail->env_ = trail->own_env_.get();
  }
  if (options.durability == Durability::kUnsynced) {
    trail->unsynced_env_ = NewUnsyncedEnv(trail->env_);
    trail->env_ = trail->unsynced_env_.get();
  }
  Result<Signer> signer = options.key_file.empty() ? LoadOrCreateSigningKey(*trail->env_, options.dir)
                                                   : LoadSigningKeyFile(*trail->env_, options.key_file, options.dir);
  if (!signer.ok()) {
    return Status(signer.status().code(), "audit signing key in " + options.dir + ": " + signer.status().message());
  }
  trail->read_env_ = trail->env_;
  if (!options.archive_dir.empty()) {
    if (!trail->env_->FileExists(options.archive_dir + "/journal")) {
      return FailedPrecondition("audit archive " + options.archive_dir +
                                " holds no journal/ folder (gpufed audit archive --to makes one)");
    }
    trail->archive_view_ = NewArchiveViewEnv(trail->env_, options.dir, {options.archive_dir});
    trail->read_env_ = trail->archive_view_.get();
  }
  trail->signer_.emplace(std::move(signer).value());
  trail->key_id_ = trail->signer_->key_id();
  JournalOptions jo;
  jo.env = trail->env_;
  jo.dir = options.dir;
  jo.signer = &*trail->signer_;
  jo.segment_bytes = options.segment_bytes;
  if (options.open_storage && !options.open_source) {
    return InvalidArgument("audit trail " + options.dir + ": a journal storage needs a record source beside it");
  }
  if (options.open_source) {
    trail->open_source_ = options.open_source;
  } else {
    trail->open_source_ = [env = trail->read_env_, dir = options.dir]() -> std::unique_ptr<JournalRecordSource> {
      return std::make_unique<JournalReader>(env, dir);
    };
  }
  RecoveryInfo recovery;
  auto open_journal = [&]() -> Result<std::unique_ptr<AuditJournal>> {
    if (!options.open_storage) return AuditJournal::Open(jo, &recovery);
    Result<std::unique_ptr<JournalStorage>> storage = options.open_storage();
    if (!storage.ok()) return storage.status();
    return AuditJournal::OpenWith(jo, std::move(*storage), &recovery);
  };
  Result<std::unique_ptr<AuditJournal>> journal = open_journal();
  if (!journal.ok()) {
    return Status(journal.status().code(), "audit journal " + options.dir + ": " + journal.status().message());
  }
  trail->journal_ = std::move(journal).value();
  if (options.open_snapshots) {
    Result<std::unique_ptr<SnapshotStore>> snapshots = options.open_snapshots();
    if (!snapshots.ok()) {
      return Status(snapshots.status().code(),
                    "audit snapshots of " + options.dir + ": " + snapshots.status().message());
    }
    trail->snapshots_ = std::move(snapshots).value();
  } else {
    trail->snapshots_ = std::make_unique<FileSnapshotStore>(trail->env_, options.dir);
  }
  // The tiles follow the journal; if they cannot be brought to it, the controller runs
  // without serving them (the journal and its checkpoints are the evidence).
  Status tiles_status = Status::Ok();
  Result<std::pair<uint64_t, MerkleHash>> head = trail->journal_->TreeHead();
  Result<std::unique_ptr<TileStore>> tiles =
      head.ok() ? TileStore::Open(*trail->read_env_, options.dir, head->first, head->second, options.open_source)
                : Result<std::unique_ptr<TileStore>>(head.status());
  if (tiles.ok()) {
    trail->tiles_ = std::move(tiles).value();
    trail->journal_->AttachTiles(trail->tiles_.get());
  } else {
    tiles_status = Unavailable("the journal's tiles are unavailable: " + tiles.status().message());
  }
  trail->log_ = std::make_unique<LogView>(trail->read_env_, options.dir, trail->journal_.get(), trail->tiles_.get(),
                                          tiles_status, options.open_source);
  if (recovery.truncated_bytes > 0) {
    // A failure leaves the journal unhealthy, which the loop reports and stops placing on.
    (void)trail->journal_->Append(JournalRepairedRecord(recovery.last_seq, recovery.truncated_bytes,
                                                        recovery.quarantined, recovery.first_dropped_seq,
                                                        recovery.last_dropped_seq));
  }
  return trail;
}

AuditTrail::~AuditTrail() = default;

}  // namespace gpufed::audit
