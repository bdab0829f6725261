#pragma once
// A journal table in memory: JournalStorage and JournalRecordSource over rows of record
// lines, the shape a PostgreSQL table gives them (one row per record, a commit stored
// whole or not at all, no torn tail, a writer role). For the storage contract's tests
// (journal_storage_contract.h) and for tests that want a journal without files.
//
// Its recovery checks each row's own hash, seq and chain, and recovers the head and the
// tree from every row; it does not check the checkpoints' signatures (the file storage's
// RecoverTree does; a PostgreSQL storage must too, from its last checkpoint).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/audit/checkpoint_record.h"
#include "controller/audit/journal_storage.h"
#include "controller/common/mutex.h"

namespace gpufed::audit::testing {

// The stored rows; outlives every storage and source made over it.
class MemoryJournalTable {
 public:
  // The stored lines, without newlines, in seq order from seq 1.
  std::vector<std::string> Rows() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return rows_;
  }

 private:
  friend class MemoryJournalStorage;
  friend class MemoryRecordSource;
  mutable Mutex mu_;
  std::vector<std::string> rows_ GUARDED_BY(mu_);  // row i holds seq i + 1
  bool writer_ GUARDED_BY(mu_) = false;            // a storage holds the writer role
};

class MemoryJournalStorage final : public JournalStorage {
 public:
  explicit MemoryJournalStorage(MemoryJournalTable* table) : table_(table) {}
  ~MemoryJournalStorage() override { (void)Close(); }
  MemoryJournalStorage(const MemoryJournalStorage&) = delete;
  MemoryJournalStorage& operator=(const MemoryJournalStorage&) = delete;

  Result<JournalHead> Recover(const RecoveryKeys& keys, MerkleHasher& merkle, RecoveryInfo* info) override {
    MutexLock lock(table_->mu_);
    if (table_->writer_) return FailedPrecondition("another writer holds the in-memory journal");
    JournalHead head;
    LineHasher hasher;
    for (const std::string& row : table_->rows_) {
      Result<ParsedLine> line = ParseRecordLine(row, &hasher);
      if (!line.ok() || line->header.seq != head.last_seq + 1 || line->header.prev != head.last_hash) {
        return Status(StatusCode::kDataLoss,
                      "in-memory journal: damaged record after seq " + std::to_string(head.last_seq));
      }
      head.last_seq = line->header.seq;
      head.last_hash = std::string(line->hash);
      if (keys.signer != nullptr) head.tree.Append(merkle.Leaf(row), merkle);
      if (line->header.kind != "checkpoint") {
        head.since_checkpoint += 1;
        continue;
      }
      head.since_checkpoint = 0;
      head.last_checkpoint = {line->header.seq, line->header.time_micros, ""};
      Result<nlohmann::json> json = RecordJson(row);
      Result<std::optional<MerkleCheckpoint>> checkpoint =
          json.ok() ? ParseMerkleCheckpoint(*json) : Result<std::optional<MerkleCheckpoint>>(json.status());
      if (checkpoint.ok() && checkpoint->has_value()) head.last_checkpoint.note = (*checkpoint)->note_text;
    }
    table_->writer_ = true;
    holds_writer_ = true;
    info->last_seq = head.last_seq;
    return head;
  }

  Status AppendCommit(std::string_view lines, uint64_t first_seq) override {
    MutexLock lock(table_->mu_);
    if (!holds_writer_) return FailedPrecondition("the in-memory journal's writer role is not held");
    if (lines.empty() || lines.back() != '\n') return InvalidArgument("a commit is complete record lines");
    if (first_seq != table_->rows_.size() + 1) return InvalidArgument("a commit must continue the head");
    for (size_t pos = 0; pos < lines.size();) {
      const size_t nl = lines.find('\n', pos);
      table_->rows_.emplace_back(lines.substr(pos, nl - pos));
      pos = nl + 1;
    }
    return Status::Ok();
  }

  Status Close() override {
    MutexLock lock(table_->mu_);
    if (holds_writer_) table_->writer_ = false;
    holds_writer_ = false;
    return Status::Ok();
  }

 private:
  MemoryJournalTable* const table_;
  bool holds_writer_ = false;
};

class MemoryRecordSource final : public JournalRecordSource {
 public:
  explicit MemoryRecordSource(const MemoryJournalTable* table) : table_(table) {}

  Status Seek(uint64_t seq) override {
    next_seq_ = seq == 0 ? 1 : seq;
    return Status::Ok();
  }

  Result<size_t> Next(size_t max, uint64_t limit, std::vector<JournalEntry>* out) override {
    MutexLock lock(table_->mu_);
    size_t added = 0;
    for (; added < max && next_seq_ <= limit && next_seq_ <= table_->rows_.size(); ++added, ++next_seq_) {
      const std::string& row = table_->rows_[next_seq_ - 1];
      Result<ParsedLine> line = ParseRecordLine(row, &hasher_);
      if (!line.ok() || line->header.seq != next_seq_) {
        return Status(StatusCode::kDataLoss, "in-memory journal: damaged record seq " + std::to_string(next_seq_));
      }
      out->push_back({line->header.seq, line->header.time_micros, line->header.kind, std::string(line->hash), row});
    }
    return added;
  }

 private:
  const MemoryJournalTable* const table_;
  uint64_t next_seq_ = 1;
  LineHasher hasher_;
};

}  // namespace gpufed::audit::testing
