// Everything that reads a journal, once its older segments are archived: the verifier
// (alone, and with the archive), the reader a shipper follows, a start's tiles and log,
// and proofs.
#include <gtest/gtest.h>

#include <filesystem>

#include "controller/audit/archive.h"
#include "controller/audit/archive_env.h"
#include "controller/audit/audit_trail.h"
#include "controller/audit/file_journal_storage.h"
#include "controller/audit/proofs.h"
#include "controller/audit/reader.h"
#include "controller/audit/record.h"
#include "controller/audit/signing_key.h"
#include "controller/audit/testing/fault_env.h"
#include "controller/audit/testing/segmented_journal.h"
#include "controller/audit/verify.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

using testing::Segments;

class ArchiveReadersTest : public ::testing::Test {
 protected:
  ArchiveReadersTest() : audit_(dir_.str() + "/audit"), archive_(dir_.str() + "/archive") {
    // The controller's own layout: the key pair in the audit folder (AuditTrail reads it).
    signer_.emplace(std::move(CreateSigningKey(env_, audit_)).value());
    key_.emplace(std::move(SignatureVerifier::FromPublicKeyPem(signer_->PublicKeyPem())).value());
  }

  // A journal of several segments; its first `archived` segments moved to the archive.
  // Returns the first live seq.
  uint64_t ArchivedJournal(size_t archived) {
    testing::AppendCommits(env_, audit_, *signer_, 40);
    whole_ = *VerifyJournalDir(env_, audit_, {&*key_, false});
    ArchiveOptions o;
    o.env = &env_;
    o.audit_dir = audit_;
    o.archive_dir = archive_;
    o.before_seq = Segments(env_, audit_)[archived].first;
    Result<ArchiveResult> result = ArchiveSegments(o);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    EXPECT_EQ(result->moved.size(), archived);
    return *o.before_seq;
  }
  std::unique_ptr<Env> View() { return NewArchiveViewEnv(&env_, audit_, {archive_}); }
  std::unique_ptr<AuditTrail> OpenTrail(const std::string& archive_dir) {
    AuditTrailOptions o;
    o.dir = audit_;
    o.env = &env_;
    o.segment_bytes = testing::kSmallSegmentBytes;
    o.archive_dir = archive_dir;
    Result<std::unique_ptr<AuditTrail>> trail = AuditTrail::Open(o);
    EXPECT_TRUE(trail.ok()) << trail.status().ToString();
    return trail.ok() ? std::move(*trail) : nullptr;
  }

  testing::FaultEnv env_;
  testutil::TempDir dir_;
  const std::string audit_, archive_;
  std::optional<Signer> signer_;
  std::optional<SignatureVerifier> key_;
  VerifyReport whole_;
};

TEST_F(ArchiveReadersTest, VerifyAloneSaysWhereTheJournalBeginsAndWithTheArchiveChecksItAll) {
  const uint64_t first = ArchivedJournal(2);
  // The live journal alone: from seq `first`, every checkpoint signed and its tree whole
  // (picked up from the first live checkpoint's frontier, which its signature holds).
  Result<VerifyReport> live = VerifyJournalDir(env_, audit_, {&*key_, false});
  ASSERT_TRUE(live.ok());
  EXPECT_TRUE(live->ok) << live->error;
  EXPECT_EQ(live->first_seq, first);
  EXPECT_EQ(live->last_seq, whole_.last_seq);
  EXPECT_EQ(live->root_hash, whole_.root_hash);
  EXPECT_GT(live->signatures_verified, 0U);
  // The archive alone: seq 1 to first - 1, ending with a checkpoint; its last hash is the
  // live journal's first prev.
  Result<VerifyReport> archive = VerifyJournalDir(env_, archive_, {&*key_, false});
  ASSERT_TRUE(archive.ok());
  EXPECT_TRUE(archive->ok) << archive->error;
  EXPECT_EQ(archive->first_seq, 1U);
  EXPECT_EQ(archive->last_seq, first - 1);
  EXPECT_EQ(archive->last_checkpoint_seq, first - 1);
  // Both as one: the journal as it was.
  Result<VerifyReport> both = VerifyJournalDir(*View(), audit_, {&*key_, false});
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->ok) << both->error;
  EXPECT_EQ(both->first_seq, 1U);
  EXPECT_EQ(both->records, whole_.records);
  EXPECT_EQ(both->signatures_verified, whole_.signatures_verified);

  // A byte changed in the archive fails the history read as one.
  const std::string archived = Segments(env_, archive_)[0].second;
  std::string text = *env_.ReadFile(archived);
  text[text.find("\"n\":0") + 4] = '7';
  std::filesystem::remove(archived);
  ASSERT_TRUE(WriteFileAtomic(env_, archived, text).ok());
  Result<VerifyReport> tampered = VerifyJournalDir(*View(), audit_, {&*key_, false});
  ASSERT_TRUE(tampered.ok());
  EXPECT_FALSE(tampered->ok);
  // A copy in both places that differs is damage, named.
  const auto [live_first, live_path] = Segments(env_, audit_)[0];
  std::string copy = *env_.ReadFile(live_path);
  copy.back() = ' ';
  ASSERT_TRUE(WriteFileAtomic(env_, archive_ + "/journal/" + SegmentName(live_first), copy).ok());
  EXPECT_EQ(ArchivedTwice(env_, audit_, archive_).status().code(), StatusCode::kDataLoss);
}

TEST_F(ArchiveReadersTest, AReaderFollowsWhileOlderSegmentsAreArchivedAndNamesAGap) {
  testing::AppendCommits(env_, audit_, *signer_, 40);
  const auto segments = Segments(env_, audit_);
  JournalReader reader(&env_, audit_);
  ASSERT_TRUE(reader.Seek(1).ok());
  std::vector<JournalEntry> read;
  // Into segment 1, as a shipper would be.
  while (read.empty() || read.back().seq < segments[1].first + 1) ASSERT_TRUE(reader.Next(1, UINT64_MAX, &read).ok());
  ArchiveOptions o;
  o.env = &env_;
  o.audit_dir = audit_;
  o.archive_dir = archive_;
  o.before_seq = segments[1].first;
  ASSERT_EQ(ArchiveSegments(o)->moved.size(), 1U);
  for (;;) {
    Result<size_t> n = reader.Next(1000, UINT64_MAX, &read);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    if (*n == 0) break;
  }
  for (size_t i = 0; i < read.size(); ++i) ASSERT_EQ(read[i].seq, i + 1);
  EXPECT_EQ(read.size(), VerifyJournalDir(*View(), audit_, {})->last_seq);

  // From seq 1, the live journal alone begins where it begins; a segment missing in the
  // middle is a gap, not a silent jump.
  JournalReader live(&env_, audit_);
  ASSERT_TRUE(live.Seek(1).ok());
  std::vector<JournalEntry> first;
  ASSERT_TRUE(live.Next(1, UINT64_MAX, &first).ok());
  EXPECT_EQ(first[0].seq, segments[1].first);
  std::filesystem::remove(segments[3].second);
  JournalReader gap(&env_, audit_);
  ASSERT_TRUE(gap.Seek(segments[2].first).ok());
  std::vector<JournalEntry> entries;
  Result<size_t> n = gap.Next(100000, UINT64_MAX, &entries);
  EXPECT_EQ(n.status().code(), StatusCode::kDataLoss);
}

TEST_F(ArchiveReadersTest, AStartKeepsItsTilesAndRebuildsThemOnlyFromTheArchive) {
  testing::AppendCommits(env_, audit_, *signer_, 40);
  OpenTrail("").reset();  // a start makes the tiles
  ArchiveOptions o;
  o.env = &env_;
  o.audit_dir = audit_;
  o.archive_dir = archive_;
  o.before_seq = Segments(env_, audit_)[3].first;
  ASSERT_EQ(ArchiveSegments(o)->moved.size(), 3U);
  {
    // The tiles of the archived leaves are kept: the start serves them and appends.
    std::unique_ptr<AuditTrail> trail = OpenTrail("");
    ASSERT_NE(trail, nullptr);
    EXPECT_TRUE(trail->log().Tile("0/000.p/3").ok());
    Result<std::string> bundle = trail->log().Tile("entries/000.p/3");
    EXPECT_EQ(bundle.status().code(), StatusCode::kNotFound);
    EXPECT_NE(bundle.status().message().find("archived"), std::string::npos);
    ASSERT_TRUE(trail->journal().Append({RecordKind::kDecision, {{"after", "archive"}}}).ok());
    ASSERT_TRUE(trail->journal().Close().ok());
  }
  std::filesystem::remove_all(audit_ + "/tiles");
  {
    // Lost tiles cannot be made from the live journal alone; the journal still runs.
    std::unique_ptr<AuditTrail> trail = OpenTrail("");
    ASSERT_NE(trail, nullptr);
    Result<std::string> tile = trail->log().Tile("0/000.p/3");
    EXPECT_FALSE(tile.ok());
    EXPECT_NE(tile.status().message().find("archived"), std::string::npos) << tile.status().ToString();
    ASSERT_TRUE(trail->journal().Append({RecordKind::kDecision, {{"without", "tiles"}}}).ok());
    ASSERT_TRUE(trail->journal().Close().ok());
  }
  {
    // With the archive they are made again, and the archived entries are served.
    std::unique_ptr<AuditTrail> trail = OpenTrail(archive_);
    ASSERT_NE(trail, nullptr);
    EXPECT_TRUE(trail->log().Tile("0/000.p/3").ok());
    EXPECT_TRUE(trail->log().Tile("entries/000.p/3").ok());
    ASSERT_TRUE(trail->journal().Close().ok());
  }
  Result<VerifyReport> both = VerifyJournalDir(*View(), audit_, {&*key_, false});
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->ok) << both->error;
}

TEST_F(ArchiveReadersTest, ProofsOfArchivedRecordsNeedTheArchive) {
  ArchivedJournal(2);
  Result<JournalProver> alone = JournalProver::Load(env_, audit_);
  EXPECT_EQ(alone.status().code(), StatusCode::kFailedPrecondition);
  std::unique_ptr<Env> view = View();
  Result<JournalProver> prover = JournalProver::Load(*view, audit_);
  ASSERT_TRUE(prover.ok()) << prover.status().ToString();
  Result<nlohmann::json> proof = prover->Inclusion(1, 0, "");
  ASSERT_TRUE(proof.ok()) << proof.status().ToString();
  Result<ProofCheck> check = VerifyProof(*proof, ProofKey{std::nullopt, &*key_}, "", "");
  EXPECT_TRUE(check.ok()) << check.status().ToString();
}

}  // namespace
}  // namespace gpufed::audit
