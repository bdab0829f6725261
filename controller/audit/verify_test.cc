#include "controller/audit/verify.h"

#include <gtest/gtest.h>

#include "controller/audit/file_journal_storage.h"
#include "controller/audit/journal.h"
#include "controller/audit/testing/fault_env.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

// Ten chained record lines, as a journal writes them.
std::vector<std::string> Chain(int n) {
  std::vector<std::string> lines;
  std::string prev(kGenesisHash);
  for (int i = 1; i <= n; ++i) {
    std::string hash;
    RecordHeader h{static_cast<uint64_t>(i), 1'795'000'000'000'000 + i, "decision", "c1", prev};
    lines.push_back(EncodeRecordLine(h, DumpPayload({{"workload", "w" + std::to_string(i)}}), &hash));
    prev = hash;
  }
  return lines;
}

VerifyReport VerifyLines(const std::vector<std::string>& lines, bool receiver = false) {
  ChainVerifier v({nullptr, receiver});
  for (const std::string& l : lines) v.AddLine(l);
  return v.Finish();
}

TEST(ChainVerifier, AcceptsIntactChain) {
  VerifyReport r = VerifyLines(Chain(10));
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.records, 10u);
}

TEST(ChainVerifier, ChangedByteNamesThatRecord) {
  auto lines = Chain(10);
  lines[4][lines[4].find("w5")] = 'v';
  VerifyReport r = VerifyLines(lines);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 5u);
}

TEST(ChainVerifier, DeletedRecordIsAGap) {
  auto lines = Chain(10);
  lines.erase(lines.begin() + 6);
  VerifyReport r = VerifyLines(lines);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 7u);
}

TEST(ChainVerifier, DeletedFirstRecordIsDetected) {
  auto lines = Chain(3);
  lines.erase(lines.begin());
  EXPECT_EQ(VerifyLines(lines).first_bad_seq, 1u);
}

TEST(ChainVerifier, ReorderedRecordsAreDetected) {
  auto lines = Chain(10);
  std::swap(lines[3], lines[4]);
  VerifyReport r = VerifyLines(lines);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 4u);
}

TEST(ChainVerifier, DuplicateInJournalIsTampering) {
  auto lines = Chain(5);
  lines.insert(lines.begin() + 3, lines[2]);
  VerifyReport r = VerifyLines(lines);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 3u);
}

TEST(ChainVerifier, ReceiverToleratesIdenticalRedeliveries) {
  auto lines = Chain(6);
  std::vector<std::string> received;
  received.reserve(8);
  for (int i = 0; i < 4; ++i)
    received.push_back("2026-11-22T10:00:00Z peer=127.0.0.1 host gpufed 1 audit [x] " + lines[i]);
  for (int i = 2; i < 6; ++i)
    received.push_back("2026-11-22T10:00:01Z peer=127.0.0.1 host gpufed 1 audit [x] " + lines[i]);
  received.insert(received.begin() + 1, "Nov 22 10:00:00 host sshd[1]: unrelated line");
  VerifyReport r = VerifyLines(received, true);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.records, 6u);
  EXPECT_EQ(r.duplicates, 2u);
  EXPECT_EQ(r.foreign_lines, 1u);
}

TEST(ChainVerifier, ReceiverRejectsDuplicateWithOtherContent) {
  auto lines = Chain(4);
  auto forged = Chain(4);  // same seqs, a different chain (other times)
  std::string fake = lines[1];
  fake[fake.find("w2")] = 'v';
  std::vector<std::string> received = {lines[0], lines[1], lines[2], fake, lines[3]};
  VerifyReport r = VerifyLines(received, true);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 2u);
}

TEST(ChainVerifier, ReceiverIgnoresTornFragmentBeforeACompleteRecord) {
  auto lines = Chain(3);
  std::vector<std::string> received = {"p " + lines[0], "p " + lines[1].substr(0, 40) + "p " + lines[1],
                                       "p " + lines[2]};
  VerifyReport r = VerifyLines(received, true);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.torn_fragments, 1u);
}

TEST(ChainVerifier, ReceiverCopyWithoutRecordsFails) { EXPECT_FALSE(VerifyLines({"hello"}, true).ok); }

// A controller's journal that stops cleanly ends with controller-stop and a signed
// checkpoint; cutting records off its end shows as an unclosed journal, key or not.
TEST(JournalVerify, ACutOffTailShowsAsAnUnclosedJournal) {
  testutil::TempDir dir;
  std::unique_ptr<Env> env = NewPosixEnv();
  Result<Signer> signer = Signer::Generate();
  ASSERT_TRUE(signer.ok());
  {
    JournalOptions o;
    o.env = env.get();
    o.dir = dir.str();
    o.signer = &*signer;
    o.checkpoint_every = 5;
    auto j = std::move(AuditJournal::Open(o)).value();
    ASSERT_TRUE(j->Append({RecordKind::kControllerStart, {{"version", "t"}}}).ok());
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(j->Append({RecordKind::kDecision, {{"i", i}}}).ok());
    ASSERT_TRUE(j->Append({RecordKind::kControllerStop, {{"reason", "test"}}}).ok());
    ASSERT_TRUE(j->Close().ok());
  }
  Result<VerifyReport> closed = VerifyJournalDir(*env, dir.str(), {});
  ASSERT_TRUE(closed.ok());
  EXPECT_TRUE(closed->ok);
  EXPECT_FALSE(closed->unclosed);

  // Cut the last three lines (checkpoint, controller-stop, checkpoint): still a valid
  // chain, but it no longer ends the way a stopped controller leaves it.
  auto segments = ListSegments(*env, dir.str() + "/journal");
  ASSERT_TRUE(segments.ok());
  const std::string path = segments->back().second;
  std::string text = env->ReadFile(path).value();
  for (int cut = 0; cut < 3; ++cut) text.erase(text.rfind('\n', text.size() - 2) + 1);
  ASSERT_TRUE(WriteFileAtomic(*env, path, text).ok());
  Result<VerifyReport> cut = VerifyJournalDir(*env, dir.str(), {});
  ASSERT_TRUE(cut.ok());
  EXPECT_TRUE(cut->ok) << cut->error;
  EXPECT_TRUE(cut->unclosed);
  // Every append is signed: start 1 (checkpoint 2), decisions 3, 5, ... 15 (each followed
  // by its checkpoint), stop 17, checkpoint 18; the cut leaves the last decision.
  EXPECT_EQ(cut->last_checkpoint_seq, 14u);
  EXPECT_EQ(cut->last_seq, 15u);
}

TEST(JournalVerify, AJournalOfOneShotRecordsIsNeverUnclosed) {
  VerifyReport r = VerifyLines(Chain(4));  // no controller-start: `gpufed audit record`
  EXPECT_TRUE(r.ok);
  EXPECT_FALSE(r.unclosed);
}

TEST(ParseRecordLine, RoundTripsHeader) {
  auto lines = Chain(2);
  auto p = ParseRecordLine(lines[1]);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->header.seq, 2u);
  EXPECT_EQ(p->header.kind, "decision");
  EXPECT_EQ(p->header.controller, "c1");
  EXPECT_EQ(p->header.time_micros, 1'795'000'000'000'002);
  auto j = RecordJson(lines[1]);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["workload"], "w2");
  EXPECT_EQ((*j)["hash"], std::string(p->hash));
}

TEST(ParseRecordLine, RejectsTruncatedLine) {
  auto lines = Chain(1);
  EXPECT_EQ(ParseRecordLine(lines[0].substr(0, lines[0].size() - 3)).status().code(), StatusCode::kDataLoss);
}

TEST(TimeFormat, RoundTrips) {
  int64_t t = 1'795'000'123'456'789;
  EXPECT_EQ(ParseTimeMicros(FormatTimeMicros(t)), t);
  EXPECT_EQ(ParseTimeMicros("1970-01-02"), int64_t{86400} * 1000000);
}

// fuzz_audit_record: a forged checkpoint (its self-hash is valid: anyone can compute one)
// whose signedHash, keyId or sig is not a string made json::value() throw type_error out
// of the verifier, so `gpufed audit verify` died instead of reporting the record.
TEST(ChainVerifier, ForgedCheckpointWithWrongTypesIsReportedNotThrown) {
  Result<Signer> signer = Signer::Generate();
  ASSERT_TRUE(signer.ok());
  Result<SignatureVerifier> key = SignatureVerifier::FromPublicKeyPem(signer->PublicKeyPem());
  ASSERT_TRUE(key.ok());
  for (const char* field : {"signedHash", "keyId", "sig"}) {
    for (const SignatureVerifier* with_key : std::vector<const SignatureVerifier*>{nullptr, &*key}) {
      std::vector<std::string> lines = Chain(1);
      std::string prev = std::string(ParseRecordLine(lines[0])->hash);
      nlohmann::json payload = {{"alg", "ed25519"},
                                {"keyId", key->key_id()},
                                {"signedSeq", 1},
                                {"signedHash", prev},
                                {"sig", signer->Sign(CheckpointMessage(1, prev))}};
      payload[field] = 5;
      RecordHeader h{2, 1'795'000'000'000'002, "checkpoint", "c1", prev};
      lines.push_back(EncodeRecordLine(h, DumpPayload(payload), nullptr));
      for (bool receiver : {false, true}) {
        ChainVerifier v({with_key, receiver});
        for (const std::string& l : lines) v.AddLine(l);
        VerifyReport r = v.Finish();
        const bool checked = std::string(field) == "signedHash" || with_key != nullptr;
        EXPECT_EQ(r.ok, !checked) << field << " " << r.error;
        if (checked) {
          EXPECT_EQ(r.first_bad_seq, 2u) << field;
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpufed::audit

namespace gpufed::audit {
namespace {

TEST(DumpPayload, EscapesNonAsciiExactlyLikeEnsureAscii) {
  nlohmann::json j = {{"a", "caf\xc3\xa9 \xf0\x9f\x9a\x80 \xe2\x82\xac"}, {"b", {1, "x\"y\\z"}}, {"c", "plain"}};
  EXPECT_EQ(DumpPayload(j), j.dump(-1, ' ', true));
  std::string dumped = DumpPayload(j);
  EXPECT_TRUE(std::all_of(dumped.begin(), dumped.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }));
}

}  // namespace
}  // namespace gpufed::audit
