#pragma once
// A journal kept elsewhere (any JournalRecordSource: a PostgreSQL table) written out as a
// file journal (`gpufed audit export`): `<dir>/journal/<first seq, 20 digits>.log`
// segments of the same lines, byte for byte, which `gpufed audit verify <dir>` checks as
// it checks a controller's own journal folder.
#include <cstdint>
#include <string>

#include "controller/audit/env.h"
#include "controller/audit/journal_storage.h"
#include "controller/common/status.h"

namespace gpufed::audit {

struct JournalExportOptions {
  uint64_t segment_bytes = uint64_t{64} << 20;  // as the file journal rotates
  size_t commit_bytes = size_t{4} << 20;        // lines per write and fdatasync, at most about this
};

// Writes every record `source` holds, from seq 1, through a FileJournalStorage in `dir`
// (made private, 0700, as a controller's audit folder) and returns the last seq. The
// records are copied as read: their checks are verify's. FailedPrecondition when
// `dir/journal` holds a journal already (an export never adds to or overwrites one);
// DataLoss when the source's first record is not seq 1 or it reports damage; the
// source's and the file storage's errors otherwise (a partial export is left as it is,
// its folder named in the error).
Result<uint64_t> ExportJournal(JournalRecordSource& source, Env& env, const std::string& dir,
                               const JournalExportOptions& options = {});

}  // namespace gpufed::audit
