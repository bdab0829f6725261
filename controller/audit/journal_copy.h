#pragma once
// A copy of a journal that ends at a signed checkpoint (`gpufed state backup`): a live
// controller's journal keeps growing and its tail after the last checkpoint is unsigned,
// so a copy stops at the first checkpoint that signs every record there was when the
// copy began. Segments keep their names and contents up to that record; nothing is
// written to the source, and the source's lock is not taken (the controller keeps
// appending meanwhile).
#include <cstdint>
#include <string>

#include "controller/audit/env.h"
#include "controller/common/status.h"

namespace gpufed::audit {

struct JournalCopy {
  uint64_t last_seq = 0;   // the checkpoint the copy ends with
  std::string last_hash;
  uint64_t segments = 0;
};

// Copies `audit_dir`'s journal into `dest_audit_dir`/journal up to and including the first
// checkpoint record that covers the journal's head as of the call (a checkpoint at seq s
// signs every record before it; a head that is a checkpoint covers itself). A running
// controller writes one within its checkpoint interval: this waits for it up to
// `wait_micros`, reading only what was appended since it last looked, then
// DeadlineExceeded naming the seq it waited for. DataLoss for a damaged line.
Result<JournalCopy> CopyJournalToCheckpoint(Env& env, const std::string& audit_dir, const std::string& dest_audit_dir,
                                            int64_t wait_micros);

}  // namespace gpufed::audit
