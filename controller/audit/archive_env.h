#pragma once
// A journal and its archive folders read as one journal (`gpufed audit ... --archive DIR`,
// and the tiles' rebuild of `gpufed run --audit-archive DIR`).
//
// `gpufed audit archive` moves sealed segments, unchanged and under their own names, from
// <audit>/journal/ to <archive>/journal/ (archive.h). This Env shows the segments of each
// archive's journal/ inside <audit>/journal/: listing that folder names them too, and a
// segment the live folder lacks is read from the archive that holds it. Every reader of a
// journal folder (JournalReader, ForEachJournalLine, the verifier, the prover, query,
// report, replay) thus reads archive plus live as one history without knowing of
// archives. A segment in both places (a move a crash interrupted) is read from the live
// folder; the two copies are byte-identical by the archiver's rule (ArchivedTwice checks).
//
// The view is read-only for the journal: creating, truncating, renaming or removing a
// file under <audit>/journal/ through it is PermissionDenied (nothing but an append may
// write to a journal, and nothing appends through a view). Other paths pass through.
#include <memory>
#include <string>
#include <vector>

#include "controller/audit/env.h"
#include "controller/common/status.h"

namespace gpufed::audit {

// `base` must outlive the result. `archive_dirs` are archive folders (each holding a
// journal/); a segment is taken from the first that has it.
std::unique_ptr<Env> NewArchiveViewEnv(Env* base, const std::string& audit_dir,
                                       const std::vector<std::string>& archive_dirs);
// The same, owning `base`.
std::unique_ptr<Env> NewArchiveViewEnv(std::unique_ptr<Env> base, const std::string& audit_dir,
                                       const std::vector<std::string>& archive_dirs);

// The segment names <audit>/journal/ and <archive>/journal/ both hold, in order. DataLoss
// naming the segment when two copies differ (the archiver compared them before it could
// unlink the live one, so a difference is damage to one of them).
Result<std::vector<std::string>> ArchivedTwice(Env& env, const std::string& audit_dir, const std::string& archive_dir);

}  // namespace gpufed::audit
