#pragma once
// What a journal's recovery checks in stored record lines, whatever keeps them: the file
// journal's segments (journal_recovery.cc) and a PostgreSQL table's rows
// (controller/pgjournal) hand their lines to the same functions, so a start refuses the
// same damage on both. Only the storage-specific parts stay with each storage: where the
// walk starts (the file looks back through segments; a table starts at its last
// checkpoint row) and what is done with an unsigned tail (the file cuts a torn commit to
// quarantine; a table cannot hold one and refuses).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "controller/audit/checkpoint_record.h"
#include "controller/audit/journal_storage.h"
#include "controller/audit/merkle.h"
#include "controller/audit/record.h"
#include "controller/audit/signing.h"
#include "controller/common/status.h"

namespace gpufed::audit {

struct ScannedLine {
  size_t begin = 0, end = 0;  // the line's bytes in the text, without the newline
  uint64_t seq = 0;
  int64_t time_micros = 0;
  std::string kind;
  std::string hash;
};

// Consecutive lines (a segment, or rows read from a table) held in one text, each
// self-hashed and chained to the one before. `good_end` is the offset after the last of
// them (a file's torn tail lies beyond it).
struct ScannedLines {
  std::string path;  // the segment's path, or what else the lines are (errors name it)
  std::string text;
  std::vector<ScannedLine> lines;
  size_t good_end = 0;
};

// Checks each line of `text` (newline-terminated lines from seq `first_seq`): its own
// hash, its seq and (after the first) its prev. Stops at an incomplete last line; a
// complete line that fails is DataLoss naming `path` and the byte.
Result<ScannedLines> ScanLines(std::string path, std::string text, uint64_t first_seq, LineHasher& hasher);

std::string_view LineOf(const ScannedLines& lines, const ScannedLine& line);

// The v2 checkpoint `line` holds, if it is one.
Result<std::optional<MerkleCheckpoint>> CheckpointOf(const ScannedLines& lines, const ScannedLine& line);

// Index of the first v2 checkpoint of `lines` (or of its last when `last`); -1: none.
Result<int> FindCheckpoint(const ScannedLines& lines, bool last);

// The tree of the kept records and where the last lines are cut.
struct TreeRecovery {
  CompactRange range;
  size_t kept_lines = 0;  // of the last ScannedLines
  size_t cut = 0;         // offset in its text
};

// What follows the last checkpoint (seq `signed_head`; 0: none) in `last`: nothing, one
// commit a crash tore before its checkpoint (one time stamp; kept_lines and cut then
// leave it out), or records this journal did not write (FailedPrecondition, DataLoss).
Result<TreeRecovery> JudgeUnsignedTail(const ScannedLines& last, uint64_t signed_head, bool clean_close,
                                       CompactRange signed_range);

// Walks `walk` (oldest first; the last element is the newest stored lines) from its
// first element's line `start`, a v2 checkpoint: recovers the tree from that
// checkpoint's frontier and checks every checkpoint on the way (the key in force, this
// controller's or one a key-rotated record hands over from; the origin; the tree of the
// records before it), ends with `signer`'s key in force (or `rotation_from`'s rotation
// to it), then judges the unsigned tail of walk.back() (JudgeUnsignedTail).
Result<TreeRecovery> RecoverTreeFrom(const std::vector<const ScannedLines*>& walk, int start, const Signer& signer,
                                     const Signer* rotation_from, const std::string& origin, MerkleHasher& merkle);

// The head after the first `kept_lines` of `last`, which must be at least one: the last
// seq and hash, the records since the newest checkpoint among them, and that checkpoint
// (with its note when it is v2).
void HeadOfKeptLines(const ScannedLines& last, size_t kept_lines, JournalHead* head);

}  // namespace gpufed::audit
