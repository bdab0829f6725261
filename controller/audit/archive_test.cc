#include "controller/audit/archive.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "controller/audit/archive_env.h"
#include "controller/audit/journal.h"
#include "controller/audit/record.h"
#include "controller/audit/testing/fault_env.h"
#include "controller/audit/testing/segmented_journal.h"
#include "controller/audit/verify.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

using testing::Segments;

class ArchiveTest : public ::testing::Test {
 protected:
  ArchiveTest()
      : signer_(std::move(Signer::Generate()).value()),
        key_(std::move(SignatureVerifier::FromPublicKeyPem(signer_.PublicKeyPem())).value()),
        audit_(dir_.str() + "/audit"),
        archive_(dir_.str() + "/archive") {}

  ArchiveOptions Options() {
    ArchiveOptions o;
    o.env = &env_;
    o.audit_dir = audit_;
    o.archive_dir = archive_;
    o.key = &key_;
    return o;
  }
  ArchiveResult ArchiveOrDie(const ArchiveOptions& o) {
    Result<ArchiveResult> result = ArchiveSegments(o);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : ArchiveResult();
  }
  // The last record of a segment: its seq and time.
  ParsedLine LastRecord(const std::string& path) {
    texts_.push_back(*env_.ReadFile(path));
    std::string_view text = texts_.back();
    text.remove_suffix(1);
    return *ParseRecordLine(text.substr(text.rfind('\n') + 1));
  }
  // The journal and its archive read as one, with the key: every record and checkpoint.
  VerifyReport VerifyBoth() {
    std::unique_ptr<Env> view = NewArchiveViewEnv(&env_, audit_, {archive_});
    Result<VerifyReport> report = VerifyJournalDir(*view, audit_, {&key_, false});
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return report.ok() ? *report : VerifyReport{};
  }

  testing::FaultEnv env_;
  testutil::TempDir dir_;
  Signer signer_;
  SignatureVerifier key_;
  const std::string audit_, archive_;
  std::vector<std::string> texts_;
};

TEST_F(ArchiveTest, MovesTheSegmentsWhoseLastSeqIsBelowTheBound) {
  testing::AppendCommits(env_, audit_, signer_, 40);
  const auto before = Segments(env_, audit_);
  ASSERT_GE(before.size(), 5U);
  const VerifyReport whole = *VerifyJournalDir(env_, audit_, {&key_, false});

  ArchiveOptions dry = Options();
  dry.before_seq = before[2].first;
  dry.dry_run = true;
  EXPECT_EQ(ArchiveOrDie(dry).moved.size(), 2U);
  EXPECT_EQ(Segments(env_, audit_), before) << "a dry run moved something";
  EXPECT_FALSE(env_.FileExists(archive_));

  ArchiveOptions o = Options();
  o.before_seq = before[2].first;  // segments 0 and 1 end below it; segment 2 ends above
  ArchiveResult result = ArchiveOrDie(o);
  ASSERT_EQ(result.moved.size(), 2U);
  EXPECT_EQ(result.moved[0].first_seq, 1U);
  EXPECT_EQ(result.moved[1].last_seq, before[2].first - 1);
  EXPECT_EQ(result.live_first_seq, before[2].first);
  EXPECT_NE(result.stopped.find("holds seq " + std::to_string(before[2].first) + " or later"), std::string::npos)
      << result.stopped;
  const auto live = Segments(env_, audit_);
  const auto archived = Segments(env_, archive_);
  ASSERT_EQ(archived.size(), 2U);
  EXPECT_EQ(live.front().first, before[2].first);
  EXPECT_EQ(live.size() + archived.size(), before.size());
  EXPECT_TRUE(env_.FileExists(archive_ + "/" + kArchiveMarkerFile));

  // Together they are the journal that was: every checkpoint, the same tree.
  const VerifyReport both = VerifyBoth();
  EXPECT_TRUE(both.ok) << both.error;
  EXPECT_EQ(both.first_seq, 1U);
  EXPECT_EQ(both.signatures_verified, whole.signatures_verified);
  EXPECT_EQ(both.root_hash, whole.root_hash);
  // Archiving again with the same bound has nothing left to move.
  EXPECT_TRUE(ArchiveOrDie(o).moved.empty());
}

TEST_F(ArchiveTest, MovesTheSegmentsWhoseLastRecordIsBeforeTheTime) {
  testing::AppendCommits(env_, audit_, signer_, 40);
  const auto before = Segments(env_, audit_);
  ASSERT_GE(before.size(), 5U);
  ArchiveOptions o = Options();
  // A microsecond after the last record of segment 2: segments 0 to 2 are before it.
  o.before_micros = LastRecord(before[2].second).header.time_micros + 1;
  ArchiveResult result = ArchiveOrDie(o);
  ASSERT_EQ(result.moved.size(), 3U);
  EXPECT_EQ(result.live_first_seq, before[3].first);
  EXPECT_NE(result.stopped.find("not before"), std::string::npos) << result.stopped;
  // Exactly at a record's time is not before it.
  o.before_micros = LastRecord(before[3].second).header.time_micros;
  EXPECT_TRUE(ArchiveOrDie(o).moved.empty());
}

TEST_F(ArchiveTest, NeverTouchesTheSegmentBeingWrittenAndRunsBesideAnOpenJournal) {
  testing::AppendCommits(env_, audit_, signer_, 30);
  // A running controller holds the journal's lock and appends to its newest segment.
  Result<std::unique_ptr<AuditJournal>> journal =
      AuditJournal::Open(testing::SegmentedJournalOptions(env_, audit_, signer_));
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  const auto before = Segments(env_, audit_);
  ArchiveOptions o = Options();
  o.before_seq = UINT64_MAX;
  ArchiveResult result = ArchiveOrDie(o);
  EXPECT_EQ(result.moved.size(), before.size() - 1);
  EXPECT_EQ(result.stopped, "only the segment being written is left");
  ASSERT_EQ(Segments(env_, audit_), std::vector{before.back()});
  // The controller goes on: more commits, more segments, a clean close.
  for (int i = 0; i < 20; ++i) ASSERT_TRUE((*journal)->Append({RecordKind::kDecision, {{"more", i}}}).ok());
  ASSERT_TRUE((*journal)->Close().ok());
  journal->reset();
  // The next start resumes from the last checkpoint's frontier and appends.
  testing::AppendCommits(env_, audit_, signer_, 3);
  const VerifyReport both = VerifyBoth();
  EXPECT_TRUE(both.ok) << both.error;
  EXPECT_FALSE(both.unclosed);
}

TEST_F(ArchiveTest, KeepsWhatAnAuditSinkHasNotAcknowledged) {
  testing::AppendCommits(env_, audit_, signer_, 40);
  const auto before = Segments(env_, audit_);
  // The sink acknowledged up to the first record of segment 3: the record it names stays
  // live, so segments 0 to 2 may go, and segment 3 may not.
  const uint64_t acked = before[3].first;
  std::filesystem::create_directories(audit_ + "/cursors");
  std::ofstream(audit_ + "/cursors/siem.cursor") << R"({"sink":"siem","seq":)" << acked << R"(,"hash":"x"})";
  std::ofstream(audit_ + "/cursors/archive-bucket.cursor") << R"({"sink":"archive-bucket","seq":99999,"hash":"x"})";
  ArchiveOptions o = Options();
  o.before_seq = UINT64_MAX;
  ArchiveResult result = ArchiveOrDie(o);
  EXPECT_EQ(result.moved.size(), 3U);
  EXPECT_NE(result.stopped.find("AuditSink siem has not acknowledged"), std::string::npos) << result.stopped;
  // A damaged cursor may be the sink that lags: nothing moves.
  std::ofstream(audit_ + "/cursors/siem.cursor") << "{";
  Result<ArchiveResult> damaged = ArchiveSegments(o);
  EXPECT_EQ(damaged.status().code(), StatusCode::kDataLoss);
}

TEST_F(ArchiveTest, RefusesAnotherJournalsArchiveALiveJournalAndASecondArchiver) {
  testing::AppendCommits(env_, audit_, signer_, 40);
  ArchiveOptions o = Options();
  o.before_seq = Segments(env_, audit_)[2].first;
  ASSERT_EQ(ArchiveOrDie(o).moved.size(), 2U);
  // Another journal's archive: its last record is not the one this journal continues.
  const std::string other_audit = dir_.str() + "/other";
  testing::AppendCommits(env_, other_audit, signer_, 40);
  ArchiveOptions other = o;
  other.audit_dir = other_audit;
  other.before_seq = UINT64_MAX;
  std::filesystem::remove(Segments(env_, other_audit)[0].second);
  std::filesystem::remove(Segments(env_, other_audit)[0].second);
  EXPECT_EQ(ArchiveSegments(other).status().code(), StatusCode::kFailedPrecondition);
  // A live journal is not an archive.
  other.archive_dir = other_audit;
  other.audit_dir = audit_;
  EXPECT_EQ(ArchiveSegments(other).status().code(), StatusCode::kFailedPrecondition);
  // One archiver of a journal at a time.
  Result<std::unique_ptr<FileLock>> held = env_.LockFile(audit_ + "/archive.lock");
  ASSERT_TRUE(held.ok());
  Result<ArchiveResult> second = ArchiveSegments(o);
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("another gpufed audit archive"), std::string::npos);
}

TEST_F(ArchiveTest, AJournalWithoutSignedCheckpointsStaysLive) {
  JournalOptions jo = testing::SegmentedJournalOptions(env_, audit_, signer_);
  jo.signer = nullptr;
  Result<std::unique_ptr<AuditJournal>> journal = AuditJournal::Open(jo);
  ASSERT_TRUE(journal.ok());
  for (int i = 0; i < 40; ++i) ASSERT_TRUE((*journal)->Append({RecordKind::kDecision, {{"n", i}}}).ok());
  ASSERT_TRUE((*journal)->Close().ok());
  ArchiveOptions o = Options();
  o.before_seq = UINT64_MAX;
  ArchiveResult result = ArchiveOrDie(o);
  EXPECT_TRUE(result.moved.empty());
  EXPECT_NE(result.stopped.find("does not end with a signed (v2) checkpoint"), std::string::npos) << result.stopped;
}

// A crash after every number of file-system changes in turn: each state must verify (the
// archive and the journal as one history, segments in both places identical), take a
// controller's start and appends, and let the next archive run finish the move.
TEST_F(ArchiveTest, ACrashAtAnyStepLeavesAStateVerifyAndTheNextStartAccept) {
  const std::string pristine = dir_.str() + "/pristine";
  testing::AppendCommits(env_, pristine, signer_, 30);
  const auto segments = Segments(env_, pristine);
  const uint64_t bound = segments[3].first;  // three segments to move
  const uint64_t last_seq = VerifyJournalDir(env_, pristine, {&key_, false})->last_seq;
  bool finished = false;
  int crash_points = 0;
  for (int64_t changes = 0; !finished && changes < 200; ++changes) {
    SCOPED_TRACE("crash after " + std::to_string(changes) + " changes");
    std::filesystem::remove_all(audit_);
    std::filesystem::remove_all(archive_);
    std::filesystem::copy(pristine, audit_, std::filesystem::copy_options::recursive);
    ArchiveOptions o = Options();
    o.before_seq = bound;
    env_.changes_left = changes;
    env_.crashes = 0;
    Result<ArchiveResult> crashed = ArchiveSegments(o);
    finished = crashed.ok();
    crash_points += finished ? 0 : 1;
    EXPECT_EQ(finished, env_.crashes == 0) << crashed.status().ToString();
    if (!finished) {
      EXPECT_EQ(crashed.status().code(), StatusCode::kUnavailable) << crashed.status().ToString();
    }
    env_.changes_left = -1;

    Result<std::vector<std::string>> twice = ArchivedTwice(env_, audit_, archive_);
    ASSERT_TRUE(twice.ok() || twice.status().code() == StatusCode::kNotFound) << twice.status().ToString();
    const VerifyReport state = VerifyBoth();
    ASSERT_TRUE(state.ok) << state.error;
    EXPECT_EQ(state.first_seq, 1U);
    EXPECT_EQ(state.last_seq, last_seq);
    // The next archive run finishes the move; then a start appends to the journal.
    ArchiveResult again = ArchiveOrDie(o);
    EXPECT_EQ(again.live_first_seq, bound);
    EXPECT_EQ(Segments(env_, archive_).size(), 3U);
    EXPECT_EQ(Segments(env_, audit_).front().first, bound);
    testing::AppendCommits(env_, audit_, signer_, 2);
    const VerifyReport after = VerifyBoth();
    EXPECT_TRUE(after.ok) << after.error;
  }
  EXPECT_TRUE(finished) << "the archive run never completed";
  // Each segment is 7 changes (create, write, sync, rename, sync the archive, unlink, sync
  // the journal), after the archive's marker file: every one of them was a crash point.
  EXPECT_GE(crash_points, 3 * 7);
}

}  // namespace
}  // namespace gpufed::audit
