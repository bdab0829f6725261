#pragma once
// A signed journal in several segments, for the retention tests (archive.h): commits of
// one record each, a minute apart on the FaultEnv's virtual clock, rotated every
// `segment_bytes`. Every commit ends with its checkpoint, so every segment does.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"
#include "controller/audit/testing/fault_env.h"

namespace gpufed::audit::testing {

inline constexpr uint64_t kSmallSegmentBytes = 4096;
inline constexpr int64_t kMinuteMicros = 60'000'000;

inline JournalOptions SegmentedJournalOptions(Env& env, const std::string& dir, const Signer& signer) {
  JournalOptions o;
  o.env = &env;
  o.dir = dir;
  o.controller_id = "gpufed";  // a controller's default: AuditTrail opens it with the same origin
  o.signer = &signer;
  o.segment_bytes = kSmallSegmentBytes;
  return o;
}

// Appends `commits` one-record commits to the journal in `dir` (created or continued)
// and closes it; the clock moves a minute before each.
inline void AppendCommits(FaultEnv& env, const std::string& dir, const Signer& signer, int commits) {
  Result<std::unique_ptr<AuditJournal>> journal = AuditJournal::Open(SegmentedJournalOptions(env, dir, signer));
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  for (int i = 0; i < commits; ++i) {
    env.Advance(kMinuteMicros);
    AuditRecord record{RecordKind::kDecision, {{"workload", "w" + std::to_string(i)}, {"n", i}}};
    ASSERT_TRUE((*journal)->Append(record).ok());
  }
  ASSERT_TRUE((*journal)->Close().ok());
}

// The segments of `dir`'s journal (or an archive's) as (first seq, path).
inline std::vector<std::pair<uint64_t, std::string>> Segments(Env& env, const std::string& dir) {
  Result<std::vector<std::pair<uint64_t, std::string>>> segments = ListSegments(env, dir + "/journal");
  return segments.ok() ? *segments : std::vector<std::pair<uint64_t, std::string>>();
}

}  // namespace gpufed::audit::testing
