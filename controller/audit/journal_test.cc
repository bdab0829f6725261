#include "controller/audit/journal.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/reader.h"
#include "controller/audit/records.h"
#include "controller/audit/testing/fault_env.h"
#include "controller/audit/verify.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

AuditRecord Rec(int i) { return {RecordKind::kDecision, {{"workload", "w" + std::to_string(i)}, {"n", i}}}; }

class JournalTest : public ::testing::Test {
 protected:
  JournalOptions Options() {
    JournalOptions o;
    o.env = &env_;
    o.dir = dir_.str();
    o.controller_id = "test-ctl";
    return o;
  }
  std::unique_ptr<AuditJournal> OpenOrDie(const JournalOptions& o, RecoveryInfo* info = nullptr) {
    auto j = AuditJournal::Open(o, info);
    EXPECT_TRUE(j.ok()) << j.status().ToString();
    return j.ok() ? std::move(*j) : nullptr;
  }
  // A closed journal of one record signed by `signer`.
  void WriteOneSignedRecord(const Signer& signer) {
    JournalOptions o = Options();
    o.signer = &signer;
    auto j = OpenOrDie(o);
    ASSERT_TRUE(j->Append(Rec(1)).ok());
    ASSERT_TRUE(j->Close().ok());
  }
  VerifyReport Verify(const SignatureVerifier* key = nullptr) {
    auto r = VerifyJournalDir(env_, dir_.str(), {key, false});
    EXPECT_TRUE(r.ok());
    return *r;
  }
  std::string LastSegment() {
    auto segs = ListSegments(env_, dir_.str() + "/journal");
    return segs->back().second;
  }

  testing::FaultEnv env_;
  testutil::TempDir dir_;
};

TEST_F(JournalTest, AppendReturnsConsecutiveSequenceNumbersAndChainVerifies) {
  auto j = OpenOrDie(Options());
  for (int i = 1; i <= 10; ++i) {
    auto seq = j->Append(Rec(i));
    ASSERT_TRUE(seq.ok());
    EXPECT_EQ(*seq, static_cast<uint64_t>(i));
  }
  VerifyReport r = Verify();
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.records, 10u);
}

TEST_F(JournalTest, AppendIsDurableBeforeItReturns) {
  auto j = OpenOrDie(Options());
  int64_t before = env_.syncs;
  ASSERT_TRUE(j->Append(Rec(1)).ok());
  EXPECT_GT(env_.syncs, before);
}

TEST_F(JournalTest, BatchCommitsWithOneSync) {
  auto j = OpenOrDie(Options());
  ASSERT_TRUE(j->Append(Rec(0)).ok());  // creates the segment
  std::vector<AuditRecord> batch;
  batch.reserve(100);
  for (int i = 0; i < 100; ++i) batch.push_back(Rec(i));
  int64_t before = env_.syncs;
  auto last = j->AppendBatch(batch);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(*last, 101u);
  EXPECT_EQ(env_.syncs - before, 1);
}

TEST_F(JournalTest, ConcurrentAppendersShareSyncsAndKeepTheChain) {
  auto j = OpenOrDie(Options());
  std::vector<std::thread> threads;
  threads.reserve(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) ASSERT_TRUE(j->Append(Rec(t * 1000 + i)).ok());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(j->last_seq(), 1600u);
  EXPECT_LT(env_.syncs, 1600);
  EXPECT_TRUE(Verify().ok);
}

TEST_F(JournalTest, RejectsPayloadWithHeaderKey) {
  auto j = OpenOrDie(Options());
  auto r = j->Append({RecordKind::kDecision, {{"seq", 5}}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(j->health().ok());
}

// The file journal has no transaction for other writes to commit in: work riding with a
// batch is refused before it is queued, nothing is written, and the journal stays healthy.
TEST_F(JournalTest, TheFileJournalRefusesWorkRidingWithItsRecordsAndStaysHealthy) {
  auto j = OpenOrDie(Options());
  EXPECT_FALSE(j->carries_work());
  bool ran = false;
  RidingWork work{.run = [&](CommitScope&) {
    ran = true;
    return Status::Ok();
  }};
  const AuditRecord record{RecordKind::kDecision, {{"workload", "a"}}};
  auto r = j->AppendBatch(std::span(&record, 1), nullptr, &work);
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(ran);
  EXPECT_EQ(j->last_seq(), 0u);
  EXPECT_TRUE(j->health().ok());
  EXPECT_TRUE(j->Append(record).ok());
}

// Every line must fit a tlog-tiles entry (16-bit length): a larger payload is refused
// before anything is written, and the journal stays healthy.
TEST_F(JournalTest, RefusesAPayloadThatATileEntryCannotHold) {
  auto j = OpenOrDie(Options());
  auto r = j->Append({RecordKind::kPolicyDegraded, {{"detail", std::string(kMaxRecordPayloadBytes, 'x')}}});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("policy-degraded"), std::string::npos) << r.status().message();
  EXPECT_TRUE(j->health().ok());
  EXPECT_EQ(j->last_seq(), 0u);
  ASSERT_TRUE(j->Append({RecordKind::kPolicyDegraded, {{"detail", std::string(60'000, 'x')}}}).ok());
  // A rejection of a repository with thousands of problems is bounded by its builder.
  std::vector<std::string> problems(5000, std::string(2000, 'p'));
  ASSERT_TRUE(j->Append(PolicyRejectedRecord("rev", "repo", problems)).ok());
}

// A journal of the older format (v1 checkpoints: a signature over the chain head), in two
// segments, with a record after its last checkpoint: it opens with its key, keeps its
// tail, and goes on with signed-note checkpoints; verify reads both formats.
TEST_F(JournalTest, AnOlderJournalOfSeveralSegmentsOpensAndGoesOnWithTheTree) {
  Signer signer = Signer::Generate().value();
  const std::string jdir = dir_.str() + "/journal";
  std::filesystem::create_directories(jdir);
  std::string prev(kGenesisHash);
  std::string segment;
  auto add = [&](uint64_t seq, const std::string& kind, const nlohmann::json& payload) {
    RecordHeader h{seq, 1'700'000'000'000'000 + static_cast<int64_t>(seq), kind, "test-ctl", prev};
    segment += EncodeRecordLine(h, DumpPayload(payload), &prev) + "\n";
  };
  auto v1_checkpoint = [&](uint64_t seq) {
    add(seq, "checkpoint",
        {{"alg", "ed25519"},
         {"keyId", signer.key_id()},
         {"signedSeq", seq - 1},
         {"signedHash", prev},
         {"sig", signer.Sign(CheckpointMessage(seq - 1, prev))}});
  };
  auto flush = [&](uint64_t first) {
    std::ofstream(jdir + "/" + SegmentName(first), std::ios::binary) << segment;
    segment.clear();
  };
  add(1, "decision", {{"n", 1}});
  add(2, "decision", {{"n", 2}});
  v1_checkpoint(3);
  flush(1);
  add(4, "decision", {{"n", 4}});
  v1_checkpoint(5);
  add(6, "decision", {{"n", 6}});  // after the last checkpoint: kept, as older journals were
  flush(4);

  JournalOptions o = Options();
  o.signer = &signer;
  {
    auto j = OpenOrDie(o);
    EXPECT_EQ(j->last_seq(), 6u);
    ASSERT_TRUE(j->Append(Rec(7)).ok());
    EXPECT_EQ(j->last_checkpoint().seq, 8u);
    ASSERT_TRUE(j->Close().ok());
  }
  auto j = OpenOrDie(o);  // now from its v2 checkpoint
  EXPECT_EQ(j->last_seq(), 8u);
  j.reset();
  SignatureVerifier key = SignatureVerifier::FromPublicKeyPem(signer.PublicKeyPem()).value();
  VerifyReport r = Verify(&key);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.signatures_verified, 3u);
  EXPECT_EQ(r.tree_size, 8u);
}

TEST_F(JournalTest, ReopenContinuesTheChain) {
  {
    auto j = OpenOrDie(Options());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(j->Append(Rec(i)).ok());
  }
  RecoveryInfo info;
  auto j = OpenOrDie(Options(), &info);
  EXPECT_EQ(info.last_seq, 5u);
  EXPECT_EQ(*j->Append(Rec(6)), 6u);
  EXPECT_TRUE(Verify().ok);
}

TEST_F(JournalTest, SecondWriterIsLockedOut) {
  auto j = OpenOrDie(Options());
  auto second = AuditJournal::Open(Options());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(JournalTest, TornTailIsTruncatedAndChainContinues) {
  {
    auto j = OpenOrDie(Options());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(j->Append(Rec(i)).ok());
  }
  // A crash in the middle of writing the next group: half a record, no newline.
  std::string seg = LastSegment();
  std::string text = *env_.ReadFile(seg);
  std::string last_line = text.substr(text.rfind('\n', text.size() - 2) + 1);
  std::ofstream(seg, std::ios::app) << last_line.substr(0, last_line.size() / 2);
  RecoveryInfo info;
  auto j = OpenOrDie(Options(), &info);
  EXPECT_EQ(info.last_seq, 5u);
  EXPECT_EQ(info.dropped_lines, 1u);
  EXPECT_GT(info.truncated_bytes, 0u);
  EXPECT_EQ(*j->Append(Rec(6)), 6u);
  EXPECT_TRUE(Verify().ok) << Verify().error;
}

TEST_F(JournalTest, DamageFollowedByIntactRecordsIsDataLossNotTruncation) {
  {
    auto j = OpenOrDie(Options());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(j->Append(Rec(i)).ok());
  }
  std::string seg = LastSegment();
  std::string text = *env_.ReadFile(seg);
  text[text.find("\"w2\"") + 1] = 'X';  // record 3
  std::ofstream(seg, std::ios::trunc) << text;
  auto j = AuditJournal::Open(Options());
  EXPECT_EQ(j.status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(env_.ReadFile(seg)->size(), text.size());  // nothing was cut
}

TEST_F(JournalTest, FailedSyncFailsTheAppendAndEveryLaterOne) {
  auto j = OpenOrDie(Options());
  ASSERT_TRUE(j->Append(Rec(1)).ok());
  env_.fail_sync = true;
  EXPECT_FALSE(j->Append(Rec(2)).ok());
  env_.fail_sync = false;  // a retried fsync may falsely succeed: stay failed
  auto again = j->Append(Rec(3));
  EXPECT_FALSE(again.ok());
  EXPECT_FALSE(j->health().ok());
  EXPECT_EQ(j->last_seq(), 1u);
}

TEST_F(JournalTest, FullDiskIsResourceExhaustedAndReopenRecovers) {
  {
    auto j = OpenOrDie(Options());
    ASSERT_TRUE(j->Append(Rec(1)).ok());
    env_.disk_bytes_left = 40;  // part of the next record fits
    auto r = j->Append(Rec(2));
    EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
    EXPECT_EQ(j->health().code(), StatusCode::kResourceExhausted);
  }
  env_.disk_bytes_left = -1;
  RecoveryInfo info;
  auto j = OpenOrDie(Options(), &info);
  EXPECT_EQ(info.last_seq, 1u);
  EXPECT_EQ(info.dropped_lines, 1u);
  EXPECT_EQ(*j->Append(Rec(2)), 2u);
  EXPECT_TRUE(Verify().ok);
}

TEST_F(JournalTest, RotatesSegmentsAndReadsAcrossThem) {
  JournalOptions o = Options();
  o.segment_bytes = 1000;
  auto j = OpenOrDie(o);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(j->Append(Rec(i)).ok());
  auto segs = ListSegments(env_, dir_.str() + "/journal");
  EXPECT_GT(segs->size(), 5u);
  JournalReader reader(&env_, dir_.str());
  ASSERT_TRUE(reader.Seek(17).ok());
  std::vector<JournalEntry> out;
  ASSERT_TRUE(reader.Next(1000, 1000, &out).ok());
  ASSERT_EQ(out.size(), 34u);
  EXPECT_EQ(out.front().seq, 17u);
  EXPECT_EQ(out.back().seq, 50u);
  EXPECT_TRUE(Verify().ok);
}

// A batch's records need not be contiguous: a checkpoint the journal signs may fall
// between two of them, and the caller links actions to decisions by these seqs.
TEST_F(JournalTest, ABatchReportsEachRecordsSeqAcrossACheckpoint) {
  Signer signer = Signer::Generate().value();
  JournalOptions o = Options();
  o.signer = &signer;
  o.checkpoint_every = 4;
  auto j = OpenOrDie(o);
  std::vector<AuditRecord> batch;
  batch.reserve(6);
  for (int i = 0; i < 6; ++i) batch.push_back(Rec(i));
  std::vector<uint64_t> seqs;
  auto last = j->AppendBatch(batch, &seqs);
  ASSERT_TRUE(last.ok());
  // Records 1-4, the checkpoint as 5, records 6-7; the last seq is the last record's.
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 2, 3, 4, 6, 7}));
  EXPECT_EQ(*last, 7u);
}

// Sign-ahead: every commit ends with a checkpoint, and a large one is also signed every
// checkpoint_every records.
TEST_F(JournalTest, EveryCommitIsSignedAndVerifiesWithKey) {
  Signer signer = Signer::Generate().value();
  JournalOptions o = Options();
  o.signer = &signer;
  o.checkpoint_every = 10;
  {
    auto j = OpenOrDie(o);
    for (int i = 0; i < 5; ++i) {
      Result<uint64_t> seq = j->Append(Rec(i));
      ASSERT_TRUE(seq.ok());
      EXPECT_EQ(j->last_checkpoint().seq, *seq + 1);  // signed before Append returned
      Result<Note> note = ParseNote(j->last_checkpoint().note);
      ASSERT_TRUE(note.ok()) << j->last_checkpoint().note;
      EXPECT_EQ(ParseCheckpointBody(note->body)->size, *seq);  // the tree of every record before it
    }
    std::vector<AuditRecord> batch;
    batch.reserve(25);
    for (int i = 0; i < 25; ++i) batch.push_back(Rec(i));
    ASSERT_TRUE(j->AppendBatch(batch).ok());
    EXPECT_EQ(j->last_checkpoint().seq, j->last_seq());
    ASSERT_TRUE(j->Close().ok());  // nothing left to sign (the destructor never writes)
  }
  {
    // A reopened journal knows its newest checkpoint's note (served at /v1/audit/log/).
    auto j = OpenOrDie(o);
    Result<Note> note = ParseNote(j->last_checkpoint().note);
    ASSERT_TRUE(note.ok());
    EXPECT_EQ(ParseCheckpointBody(note->body)->size, j->last_seq() - 1);
  }
  SignatureVerifier key = SignatureVerifier::FromPublicKeyPem(signer.PublicKeyPem()).value();
  VerifyReport r = Verify(&key);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.checkpoints, 5u + 3u);  // one per single append; 10, 20 and the end of the batch
  EXPECT_EQ(r.signatures_verified, 8u);
  EXPECT_EQ(r.last_signed_seq, r.last_seq);
  EXPECT_EQ(r.tree_size, r.last_seq);
  EXPECT_EQ(r.log_origin, "gpufed/" + o.controller_id);
}

TEST_F(JournalTest, ATimedCheckpointHasNothingToSignAfterASignedCommit) {
  Signer signer = Signer::Generate().value();
  JournalOptions o = Options();
  o.signer = &signer;
  auto j = OpenOrDie(o);
  ASSERT_TRUE(j->Append(Rec(1)).ok());
  EXPECT_EQ(j->last_seq(), 2u);  // the record and its checkpoint
  env_.Advance(11'000'000);
  ASSERT_TRUE(j->MaybeCheckpoint().ok());
  ASSERT_TRUE(j->Checkpoint().ok());
  EXPECT_EQ(j->last_seq(), 2u);
}

TEST_F(JournalTest, VerifyWithWrongKeyFails) {
  Signer signer = Signer::Generate().value();
  Signer other = Signer::Generate().value();
  ASSERT_NO_FATAL_FAILURE(WriteOneSignedRecord(signer));
  SignatureVerifier key = SignatureVerifier::FromPublicKeyPem(other.PublicKeyPem()).value();
  VerifyReport r = Verify(&key);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 2u);
}

// More keys than one: the first is the key in force from the start; the others are only
// accepted where a key-rotated record put them in force (key_rotation_test.cc), so a key
// that signed nothing is reported, and a key given second never stands in for the first.
TEST_F(JournalTest, OnlyTheFirstKeyIsInForceWithoutARotation) {
  Signer signer = Signer::Generate().value();
  Signer other = Signer::Generate().value();
  ASSERT_NO_FATAL_FAILURE(WriteOneSignedRecord(signer));
  SignatureVerifier mine = SignatureVerifier::FromPublicKeyPem(signer.PublicKeyPem()).value();
  SignatureVerifier theirs = SignatureVerifier::FromPublicKeyPem(other.PublicKeyPem()).value();
  Result<VerifyReport> first = VerifyJournalDir(env_, dir_.str(), {&mine, false, {&theirs}});
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->ok) << first->error;
  EXPECT_EQ(first->signatures_verified, 1u);
  EXPECT_EQ(first->keys_never_in_force, std::vector<std::string>{other.key_id()});
  Result<VerifyReport> second = VerifyJournalDir(env_, dir_.str(), {&theirs, false, {&mine}});
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->ok);
  EXPECT_EQ(second->first_bad_seq, 2u);
  EXPECT_NE(second->error.find(signer.key_id()), std::string::npos) << second->error;
}

}  // namespace
}  // namespace gpufed::audit
