#include "controller/audit/journal_export.h"

#include <limits>
#include <vector>

#include "controller/audit/file_journal_storage.h"

namespace gpufed::audit {

Result<uint64_t> ExportJournal(JournalRecordSource& source, Env& env, const std::string& dir,
                               const JournalExportOptions& options) {
  FileJournalStorage storage({.env = &env, .dir = dir, .segment_bytes = options.segment_bytes});
  MerkleHasher merkle;
  RecoveryInfo info;
  // No keys: the export checks nothing of the tree; it only takes the folder's lock and
  // learns whether a journal is there.
  Result<JournalHead> head = storage.Recover(RecoveryKeys{}, merkle, &info);
  if (!head.ok()) return head.status();
  if (head->last_seq != 0 || info.segments != 0) {
    return FailedPrecondition(dir + "/journal holds a journal already: an export writes only into an empty folder");
  }
  GPUFED_RETURN_IF_ERROR(source.Seek(1));
  uint64_t last = 0;
  std::vector<JournalEntry> entries;
  std::string commit;
  uint64_t commit_first = 1;
  for (;;) {
    entries.clear();
    Result<size_t> n = source.Next(1000, std::numeric_limits<uint64_t>::max(), &entries);
    if (!n.ok()) return Status(n.status().code(), n.status().message() + " (export to " + dir + " stopped)");
    for (const JournalEntry& entry : entries) {
      if (entry.seq != last + 1) {
        return Status(StatusCode::kDataLoss, "the journal holds seq " + std::to_string(entry.seq) + " where seq " +
                                                 std::to_string(last + 1) + " belongs (export to " + dir + " stopped)");
      }
      if (commit.empty()) commit_first = entry.seq;
      commit.append(entry.line).push_back('\n');
      last = entry.seq;
      if (commit.size() >= options.commit_bytes || &entry == &entries.back()) {
        GPUFED_RETURN_IF_ERROR(storage.AppendCommit(commit, commit_first));
        commit.clear();
      }
    }
    if (*n == 0) break;
  }
  GPUFED_RETURN_IF_ERROR(storage.Close());
  return last;
}

}  // namespace gpufed::audit
