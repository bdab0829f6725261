#pragma once
// Sequential reading of a file journal's folder: the file journal's JournalRecordSource
// (journal_storage.h), for shippers (from a cursor, up to the durable head), query,
// report, replay, prove and the tile store. Each line is self-checked
// (ParseRecordLine); chain checks across records are the Verifier's job.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "controller/audit/env.h"
#include "controller/audit/journal_storage.h"
#include "controller/audit/record.h"
#include "controller/common/status.h"

namespace gpufed::audit {

// Not thread-safe. `env` must outlive the reader.
class JournalReader final : public JournalRecordSource {
 public:
  // `audit_dir` is the folder given to the journal (segments are in its `journal/`).
  JournalReader(Env* env, std::string audit_dir);
  ~JournalReader() override;

  // The next entry returned will be `seq` (or the first one after it that exists: a
  // journal whose older segments were archived begins after seq 1, archive.h).
  Status Seek(uint64_t seq) override;
  // Appends up to `max` entries with seq <= `limit`, in order. Returns how many; 0 when
  // nothing more is there yet. DataLoss for a damaged record (names segment and seq) and
  // for a gap after the first entry read since Seek (a segment removed under the reader).
  Result<size_t> Next(size_t max, uint64_t limit, std::vector<JournalEntry>* out) override;

 private:
  Status OpenSegment(size_t index);
  Status Refresh();

  Env* env_;
  std::string journal_dir_;
  std::vector<std::pair<uint64_t, std::string>> segments_;
  uint64_t current_first_ = 0;  // the open segment's first seq: its index moves when older ones are archived
  std::string current_path_;
  bool read_since_seek_ = false;
  std::unique_ptr<SequentialFile> file_;
  std::string buffer_;
  size_t pos_ = 0;
  uint64_t next_seq_ = 1;
  LineHasher hasher_;
};

// Calls `fn(line)` for every line of every segment, in order (the final line even if it
// has no newline). Stops at the first error `fn` returns.
template <typename Fn>
Status ForEachJournalLine(Env& env, const std::string& audit_dir, Fn&& fn);

}  // namespace gpufed::audit

#include "controller/audit/reader_inl.h"
