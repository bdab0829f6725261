#pragma once
// Retention: `gpufed audit archive DIR --before DATE|SEQ --to ARCHIVE_DIR` moves sealed
// segments of a journal, unchanged and under their own names, to an archive folder
// (docs/audit-format.md, "Retention").
//
// The journal is evidence: nothing but an append may write to it, so the archiver never
// changes a byte of a segment. It copies a whole segment to <archive>/journal/ (a
// temporary name, fdatasync, rename, directory sync), reads the copy back and compares it
// byte for byte, and only then unlinks the live one (and syncs the journal's folder). A
// crash at any point leaves every segment complete in at least one of the two folders:
// a `.partial` file (ignored by every reader, replaced by the next run), or the same
// segment in both (readers take the live one; the next run compares the two and finishes
// the move). The archive is always a prefix of the history and the live journal the rest.
//
// A segment is archived only when all of these hold, segment by segment from the oldest
// live one (the first that fails stops the run, and the result says why):
//   - it is sealed: not the newest segment, which a running controller writes to;
//   - it ends with a signed (v2) checkpoint and the next segment holds one too, so that a
//     start never reads it (recovery resumes from the frontier of the newest checkpoint,
//     journal_recovery.cc, and never reaches back past the next segment);
//   - its chain continues the archive's (its first record's prev is the hash of the
//     archive's last record) and holds in itself: hashes, seqs, prevs, the checkpoints'
//     trees, and their signatures when a public key is given;
//   - every AuditSink with a cursor (<audit>/cursors/<sink>.cursor, shipper.h) has
//     acknowledged a record after it: the record a cursor names stays live, so a shipper
//     reopens on it. A retired sink's cursor is removed by the operator, never skipped here;
//   - `before`: its last record is older than the time, or its last seq below the number
//     (a segment an interrupted run already copied is finished regardless).
//
// The journal's lock (journal/LOCK, held by `gpufed run`) is not taken: the archiver
// reads only segments no writer touches any more and unlinks them, which a running
// controller never reads again. Two archivers of one journal exclude each other with
// <audit>/archive.lock.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/audit/env.h"
#include "controller/audit/signing.h"
#include "controller/common/status.h"

namespace gpufed::audit {

// The file an archive folder carries beside its journal/: which journal it is the archive
// of ({"format":1,"archiveOf":"<audit folder>"}). `gpufed audit verify` reads it to say
// that the folder is an archive that continues in a live journal.
inline constexpr const char* kArchiveMarkerFile = "archive.json";

struct ArchiveOptions {
  Env* env = nullptr;       // required; must outlive the call
  std::string audit_dir;    // the live journal's audit folder (holds journal/)
  std::string archive_dir;  // created 0700 when missing; its journal/ holds the segments
  // Exactly one: segments whose last record's time (microseconds since the epoch) is
  // before it, or whose last seq is below it.
  std::optional<int64_t> before_micros;
  std::optional<uint64_t> before_seq;
  const SignatureVerifier* key = nullptr;  // checks the checkpoints' signatures; null: not checked
  bool dry_run = false;                    // select and check, move nothing
};

struct ArchivedSegment {
  std::string name;  // 00000000000000000001.log
  uint64_t first_seq = 0, last_seq = 0;
  int64_t last_time_micros = 0;
  bool resumed = false;  // an interrupted run had copied it already
};

struct ArchiveResult {
  std::vector<ArchivedSegment> moved;  // (dry run: would move), oldest first
  std::string stopped;                 // why the next segment stays live
  uint64_t live_first_seq = 0;         // where the live journal begins afterwards (0: empty)
};

// Moves the segments the rules above select. A segment that does not qualify ends the
// run (ArchiveResult::stopped); errors are InvalidArgument (options), FailedPrecondition
// (another archiver runs; the archive is not this journal's, or is a live journal),
// DataLoss (a segment's chain does not hold, or two copies differ) and I/O errors. Every
// segment moved before an error stays moved; the result of a failed run is the error.
Result<ArchiveResult> ArchiveSegments(const ArchiveOptions& options);

}  // namespace gpufed::audit
