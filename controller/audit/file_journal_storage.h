#pragma once
// The file journal (docs/audit-format.md): JournalStorage over `<audit>/journal/`, whose
// `<first seq, 20 digits>.log` segments hold the record lines, and whose `LOCK` (flock)
// makes one writer. What only files have lives here: segments and their rotation, the
// fdatasync of each commit, the torn tail a crash can leave and its quarantine
// (journal_recovery.cc), the private folders.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "controller/audit/env.h"
#include "controller/audit/journal_storage.h"

namespace gpufed::audit {

struct FileJournalStorageOptions {
  Env* env = nullptr;  // required; must outlive the storage
  std::string dir;     // the audit folder; `journal/` is created inside it
  uint64_t segment_bytes = uint64_t{64} << 20;  // a commit that would pass this size starts a new segment
};

class FileJournalStorage final : public JournalStorage {
 public:
  explicit FileJournalStorage(FileJournalStorageOptions options);
  // Closes the open segment and releases the lock. Writes nothing.
  ~FileJournalStorage() override;
  FileJournalStorage(const FileJournalStorage&) = delete;
  FileJournalStorage& operator=(const FileJournalStorage&) = delete;

  // Makes the audit folder and `journal/` private (0700), takes `journal/LOCK`, scans the
  // last segment (and, to recover the tree, the segments back to a v2 checkpoint), and
  // cuts a torn commit to `<dir>/quarantine/` (journal_recovery.cc). The last segment
  // stays open for appends.
  Result<JournalHead> Recover(const RecoveryKeys& keys, MerkleHasher& merkle, RecoveryInfo* info) override;
  // One write and one fdatasync of the open segment. A commit that would take the segment
  // past `segment_bytes` (when it holds anything) first closes it and starts
  // `SegmentName(first_seq)`, whose creation is synced in the folder before the write.
  Status AppendCommit(std::string_view lines, uint64_t first_seq) override;
  Status Close() override;

  std::string journal_dir() const { return options_.dir + "/journal"; }

 private:
  const FileJournalStorageOptions options_;
  std::unique_ptr<FileLock> lock_;
  std::unique_ptr<WritableFile> segment_;  // the last segment, open for appending
  uint64_t segment_size_ = 0;
};

// Segment file name for a segment whose first record is `first_seq`.
std::string SegmentName(uint64_t first_seq);
// Segments of `journal_dir` as (first seq, path), in order. Other files are ignored.
Result<std::vector<std::pair<uint64_t, std::string>>> ListSegments(Env& env, const std::string& journal_dir);

}  // namespace gpufed::audit
