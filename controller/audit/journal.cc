#include "controller/audit/journal.h"

#include <algorithm>
#include <initializer_list>

#include "controller/audit/canonical_json.h"
#include "controller/audit/checkpoint_record.h"
#include "controller/audit/file_journal_storage.h"
#include "controller/common/secure_file.h"

namespace gpufed::audit {
namespace {

constexpr std::string_view kHeaderKeys[] = {"seq", "time", "kind", "controller", "prev", "hash"};
// Upper bound of a line's bytes besides its payload members: header, hash, newline.
constexpr size_t kLineOverhead = 256;

bool ValidControllerId(const std::string& id) {
  if (id.empty() || id.size() > 128) return false;
  for (char c : id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == ':' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

struct AuditJournal::Writer {
  struct Item {
    const char* kind;
    size_t begin, end;  // the payload's canonical JSON in `payloads`
    uint64_t seq = 0;   // set when encoded
  };
  std::vector<Item> items;
  // Every payload of the call in one buffer: one allocation per call, not per record.
  std::string payloads;
  size_t bytes = 0;
  RidingWork* riding = nullptr;  // committed with the items, in the same transaction
  Status status;
  uint64_t last_seq = 0;
  bool countersign = false;  // the commit ends with a checkpoint even if nothing waits for one
  bool done = false;
  CondVar cv;  // signalled under the journal's mu_: this writer is done or leads
};

AuditJournal::AuditJournal(const JournalOptions& options)
    : options_(options), env_(options.env), last_hash_(kGenesisHash) {}

AuditJournal::~AuditJournal() {
  MutexLock lock(mu_);
  storage_.reset();  // closes the file journal's segment and releases its lock; writes nothing
}

std::string AuditJournal::log_origin() const {
  return options_.log_origin.empty() ? "gpufed/" + options_.controller_id : options_.log_origin;
}

Result<std::unique_ptr<AuditJournal>> AuditJournal::Open(const JournalOptions& options, RecoveryInfo* info) {
  if (options.env == nullptr || options.dir.empty()) return InvalidArgument("journal needs an Env and a directory");
  return OpenWith(options,
                  std::make_unique<FileJournalStorage>(FileJournalStorageOptions{
                      .env = options.env, .dir = options.dir, .segment_bytes = options.segment_bytes}),
                  info);
}

Result<std::unique_ptr<AuditJournal>> AuditJournal::OpenWith(const JournalOptions& options,
                                                             std::unique_ptr<JournalStorage> storage,
                                                             RecoveryInfo* info) {
  if (options.env == nullptr || storage == nullptr) return InvalidArgument("journal needs an Env and a storage");
  if (!ValidControllerId(options.controller_id)) {
    return InvalidArgument("controller id '" + options.controller_id + "' must match [A-Za-z0-9._:-]+");
  }
  if (options.checkpoint_every == 0) return InvalidArgument("checkpoint_every must be at least 1");
  std::unique_ptr<AuditJournal> journal(new AuditJournal(options));
  journal->storage_ = std::move(storage);
  if (options.signer != nullptr) {
    Result<NoteSigner> note_signer = NoteSigner::Create(journal->log_origin(), options.signer);
    if (!note_signer.ok()) return note_signer.status();
    journal->note_signer_ = std::make_unique<NoteSigner>(std::move(*note_signer));
  }
  RecoveryInfo local;
  {
    MutexLock lock(journal->mu_);
    GPUFED_RETURN_IF_ERROR(journal->Recover(info != nullptr ? info : &local));
    journal->recovered_ = true;
  }
  return journal;
}

Result<uint64_t> AuditJournal::Append(const AuditRecord& record) { return AppendBatch(std::span(&record, 1)); }

Result<uint64_t> AuditJournal::AppendBatch(std::span<const AuditRecord> records, std::vector<uint64_t>* seqs,
                                           RidingWork* riding) {
  if (records.empty()) return InvalidArgument("nothing to append");
  // Refused before it is queued: a storage that cannot carry the work must not fail the
  // group (and with it the journal) it would have joined.
  if (riding != nullptr && !carries_work()) {
    return FailedPrecondition("this journal's storage cannot commit other writes with its records");
  }
  Writer w;
  w.riding = riding;
  w.items.reserve(records.size());
  // Sized from the previous call's records so that the buffer is allocated once rather
  // than grown (copied, and page-faulted anew) a dozen times. Capped: one huge record
  // must not make the next thousand small ones reserve gigabytes.
  w.payloads.reserve(
      std::min(records.size() * (payload_bytes_hint_.load(std::memory_order_relaxed) + 64), options_.max_group_bytes));
  // Serialise payloads on the caller's thread, outside the commit critical path (so
  // concurrent callers serialise in parallel).
  for (const AuditRecord& r : records) {
    if (r.kind == RecordKind::kCheckpoint) return InvalidArgument("checkpoints are written by the journal itself");
    if (!r.payload.is_object()) return InvalidArgument("a record payload must be a JSON object");
    // One pass over the (few) top-level keys rather than a map lookup per header key;
    // it also brings the nodes into cache for the serialiser.
    for (const auto& member : r.payload.get_ref<const nlohmann::json::object_t&>()) {
      if (std::find(std::begin(kHeaderKeys), std::end(kHeaderKeys), member.first) != std::end(kHeaderKeys)) {
        return InvalidArgument("payload uses the header key '" + member.first + "'");
      }
    }
    size_t begin = w.payloads.size();
    AppendCanonicalJson(r.payload, &w.payloads);
    if (w.payloads.size() - begin > kMaxRecordPayloadBytes) {
      return InvalidArgument(std::string("a ") + RecordKindName(r.kind) + " record's payload is " +
                             std::to_string(w.payloads.size() - begin) + " bytes, over the " +
                             std::to_string(kMaxRecordPayloadBytes) +
                             " a record may hold (a tlog-tiles entry is at most 65,535 bytes)");
    }
    w.items.push_back({RecordKindName(r.kind), begin, w.payloads.size()});
  }
  w.bytes = w.payloads.size() + kLineOverhead * records.size();
  payload_bytes_hint_.store(w.payloads.size() / records.size(), std::memory_order_relaxed);
  Result<uint64_t> last = Commit(&w);
  if (last.ok() && seqs != nullptr) {
    seqs->clear();
    for (const Writer::Item& item : w.items) seqs->push_back(item.seq);
  }
  return last;
}

Status AuditJournal::Checkpoint() {
  if (options_.signer == nullptr) return FailedPrecondition("no signing key configured");
  // An empty commit: it signs only what a commit has not (an older journal's unsigned tail).
  Writer w;
  return Commit(&w).status();
}

Status AuditJournal::MaybeCheckpoint() { return options_.signer == nullptr ? Status::Ok() : Checkpoint(); }

Status AuditJournal::Countersign() {
  if (options_.signer == nullptr) return FailedPrecondition("no signing key configured");
  Writer w;
  w.countersign = true;
  return Commit(&w).status();
}

Result<uint64_t> AuditJournal::Commit(Writer* w) {
  MutexLock lock(mu_);
  if (closed_) return FailedPrecondition("audit journal is closed");
  if (!health_.ok()) return health_;
  writers_.push_back(w);
  while (!w->done && w != writers_.front()) w->cv.Wait(mu_);
  if (w->done) {
    if (!w->status.ok()) return w->status;
    return w->last_seq;
  }
  // This writer leads: it commits itself and the writers queued behind it.
  std::vector<Writer*> group;
  size_t bytes = 0;
  for (Writer* next : writers_) {
    if (!group.empty() && bytes + next->bytes > options_.max_group_bytes) break;
    group.push_back(next);
    bytes += next->bytes;
  }
  Status status = health_;
  if (closed_) status = FailedPrecondition("audit journal is closed");
  uint64_t seq = last_seq_;
  std::string hash = last_hash_;
  uint64_t since_checkpoint = since_checkpoint_;
  int64_t last_checkpoint_time = last_checkpoint_time_;
  TileStore* const tiles = tiles_;
  if (status.ok()) {
    lock.Unlock();
    group_leaves_.clear();
    // The leader's buffer is reused across groups: no fresh megabytes (and their page
    // faults) per commit.
    std::string& data = group_buffer_;
    data.clear();
    data.reserve(bytes);
    uint64_t first_seq = seq + 1;
    EncodeGroup(group, env_->NowMicros(), &data, &seq, &hash, &since_checkpoint, &last_checkpoint_time);
    std::vector<RidingWork*> riding;
    for (Writer* member : group) {
      if (member->riding != nullptr) riding.push_back(member->riding);
    }
    if (!data.empty()) status = storage_->AppendCommitWith(data, first_seq, riding);
    // Before the commit returns, so that tiles cover every checkpoint a reader can see.
    if (status.ok() && tiles != nullptr && !group_leaves_.empty()) (void)tiles->Append(group_leaves_);
    lock.Lock();
    if (status.ok()) {
      // The group signed the head when fewer records follow a checkpoint than it wrote.
      if (since_checkpoint < since_checkpoint_ + (seq - last_seq_)) {
        last_checkpoint_ = {seq - since_checkpoint, last_checkpoint_time, group_note_};
      }
      last_seq_ = seq;
      last_hash_ = hash;
      since_checkpoint_ = since_checkpoint;
      last_checkpoint_time_ = last_checkpoint_time;
    } else {
      // After a failed write or fdatasync the file's state is unknown (and a retried
      // fsync may falsely succeed): fail for good; reopening recovers the torn tail.
      health_ = status;
    }
  }
  for (Writer* member : group) {
    writers_.pop_front();
    member->status = status;
    // Work whose commit failed is not durable, whatever its own run said.
    if (member->riding != nullptr && !status.ok()) member->riding->result = status;
    member->done = true;
    if (member != w) member->cv.NotifyOne();
  }
  if (!writers_.empty()) writers_.front()->cv.NotifyOne();
  if (!status.ok()) return status;
  return w->last_seq;
}

std::string_view AuditJournal::EncodeLine(uint64_t seq, int64_t now, std::string_view kind, std::string_view prev,
                                          std::string_view payload, std::string* out) {
  const size_t begin = out->size();
  std::string_view hash = encoder_.Append(seq, now, kind, options_.controller_id, prev, payload, out);
  if (note_signer_ != nullptr) {
    group_leaves_.push_back(merkle_hasher_.Leaf(std::string_view(*out).substr(begin)));
    range_.Append(group_leaves_.back(), merkle_hasher_);
  }
  *out += '\n';
  return hash;
}

void AuditJournal::AppendCheckpoint(int64_t now, std::string* out, uint64_t* seq, std::string* hash) {
  nlohmann::json payload = MerkleCheckpointPayload(*note_signer_, options_.signer->key_id(), range_, merkle_hasher_);
  group_note_ = payload["note"].get<std::string>();
  *hash = EncodeLine(*seq + 1, now, "checkpoint", *hash, DumpPayload(payload), out);
  *seq += 1;
}

void AuditJournal::EncodeGroup(const std::vector<Writer*>& group, int64_t now, std::string* out, uint64_t* seq,
                               std::string* hash, uint64_t* since_checkpoint, int64_t* last_checkpoint_time) {
  const Signer* signer = options_.signer;
  auto checkpoint = [&] {
    AppendCheckpoint(now, out, seq, hash);
    *since_checkpoint = 0;
    *last_checkpoint_time = now;
  };
  bool countersign = false;
  for (Writer* w : group) {
    countersign = countersign || w->countersign;
    for (Writer::Item& item : w->items) {
      std::string_view payload(w->payloads.data() + item.begin, item.end - item.begin);
      *hash = EncodeLine(*seq + 1, now, item.kind, *hash, payload, out);
      *seq += 1;
      item.seq = *seq;
      w->last_seq = *seq;
      *since_checkpoint += 1;
      if (signer != nullptr && *since_checkpoint >= options_.checkpoint_every) checkpoint();
    }
    if (w->items.empty()) w->last_seq = *seq;
  }
  // Sign-ahead: the commit ends with a checkpoint over everything it wrote, in the same
  // write and fdatasync, so no caller acts on a record no signature covers.
  if (signer != nullptr && (*since_checkpoint > 0 || countersign)) checkpoint();
}

Status AuditJournal::Recover(RecoveryInfo* info) {
  last_checkpoint_time_ = env_->NowMicros();
  Result<JournalHead> head = storage_->Recover(
      RecoveryKeys{.signer = options_.signer, .rotation_from = options_.rotation_from, .origin = log_origin()},
      merkle_hasher_, info);
  if (!head.ok()) return head.status();
  last_seq_ = head->last_seq;
  last_hash_ = std::move(head->last_hash);
  since_checkpoint_ = head->since_checkpoint;
  last_checkpoint_ = std::move(head->last_checkpoint);
  range_ = std::move(head->tree);
  return Status::Ok();
}

Status AuditJournal::Close() {
  {
    MutexLock lock(mu_);
    if (closed_ || !recovered_) return Status::Ok();
  }
  Status status = Status::Ok();
  if (options_.signer != nullptr && health().ok()) status = Checkpoint();
  MutexLock lock(mu_);
  closed_ = true;
  Status released = storage_->Close();
  if (status.ok()) status = released;
  return status;
}

Status AuditJournal::health() const {
  MutexLock lock(mu_);
  return health_;
}

AuditJournal::CheckpointMark AuditJournal::last_checkpoint() const {
  MutexLock lock(mu_);
  return last_checkpoint_;
}

uint64_t AuditJournal::last_seq() const {
  MutexLock lock(mu_);
  return last_seq_;
}

Result<std::pair<uint64_t, MerkleHash>> AuditJournal::TreeHead() const {
  MutexLock lock(mu_);
  if (note_signer_ == nullptr) return FailedPrecondition("a journal without a signing key keeps no tree");
  // No writer queued means no leader: range_ is still.
  if (!writers_.empty()) return FailedPrecondition("the journal is being appended to");
  MerkleHasher hasher;
  return std::make_pair(range_.size(), range_.Root(hasher));
}

void AuditJournal::AttachTiles(TileStore* tiles) {
  MutexLock lock(mu_);
  tiles_ = tiles;
}

std::string AuditJournal::last_hash() const {
  MutexLock lock(mu_);
  return last_hash_;
}

}  // namespace gpufed::audit
