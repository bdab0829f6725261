// Key rotation under crashes and forgery. Each crash window of `gpufed audit rotate-key`
// leaves a journal that a start with either key refuses, saying what to do, without
// changing a byte, and that running the command again completes. Each forgery issue 39
// names (a key replaced without a rotation record, a rotation record the key in force did
// not sign, a rotation appended after the journal was re-chained) is refused by a start,
// changing nothing, and by `gpufed audit verify` from the original key.
#include <gtest/gtest.h>

#include "controller/audit/audit_trail.h"
#include "controller/audit/testing/key_rotation_fixture.h"

namespace gpufed::audit {
namespace {

using testing::kTestOrigin;

class KeyRotationWindowTest : public testing::KeyRotationFixture {
 protected:
  // A controller's start on the audit folder: its signing.key (or `key_file`), then the
  // journal.
  Status Start(const std::string& key_file = "") {
    AuditTrailOptions options;
    options.dir = dir_.str();
    options.env = &env_;
    options.key_file = key_file;
    return AuditTrail::Open(options).status();
  }

  // Both keys are refused with `instruction` in the message, and nothing changes.
  void ExpectBothKeysRefused(const std::string& instruction) {
    const auto before = Checksums();
    for (const Signer* key : {&old_, &new_}) {
      Status s = OpenWith(*key);
      EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
      EXPECT_NE(s.message().find(instruction), std::string::npos) << s.ToString();
      EXPECT_NE(s.message().find("nothing was changed"), std::string::npos) << s.ToString();
    }
    EXPECT_EQ(Checksums(), before);
  }
};

// A crash inside the record's commit: the record without its checkpoint was never
// acknowledged. The new key is told to start with the old one; the rotation cuts it off
// (journal-repaired) and rotates.
TEST_F(KeyRotationWindowTest, ATornRotationRecordIsCutAndTheRotationRedone) {
  ASSERT_NO_FATAL_FAILURE(Run(old_, 0, 3));
  ASSERT_NO_FATAL_FAILURE(AppendRotationRecord());
  std::vector<std::string> lines = Lines();
  lines.back().resize(lines.back().size() / 2);  // the old key's checkpoint, torn
  WriteLines(lines);
  const auto before = Checksums();
  Status with_new = OpenWith(new_);
  EXPECT_EQ(with_new.code(), StatusCode::kFailedPrecondition) << with_new.ToString();
  EXPECT_NE(with_new.message().find("was never signed"), std::string::npos) << with_new.ToString();
  EXPECT_NE(with_new.message().find("Start with key " + old_.key_id()), std::string::npos) << with_new.ToString();
  EXPECT_EQ(Checksums(), before);

  Result<KeyRotationReport> r = RotateJournalKey(Rotation());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->appended);
  EXPECT_NE(r->repaired_seq, 0u);
  EXPECT_GT(r->rotated_seq, r->repaired_seq);
  VerifyReport report = Verify({&old_});
  EXPECT_TRUE(report.ok) << report.error;
  EXPECT_EQ(report.rotations.size(), 1u);
  EXPECT_EQ(report.repairs.size(), 1u);
  EXPECT_TRUE(Start().ok());
}

// A crash after the old key signed the rotation, before the new key did: neither key
// starts; running the command again writes the new key's checkpoint and the files.
TEST_F(KeyRotationWindowTest, ARotationTheNewKeyHasNotSignedIsCompletedByRunningItAgain) {
  ASSERT_NO_FATAL_FAILURE(Run(old_, 0, 3));
  ASSERT_NO_FATAL_FAILURE(AppendRotationRecord());
  ASSERT_NO_FATAL_FAILURE(ExpectBothKeysRefused("is not complete"));
  ASSERT_NO_FATAL_FAILURE(ExpectBothKeysRefused("rotate-key"));

  Result<KeyRotationReport> r = RotateJournalKey(Rotation());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->appended);
  EXPECT_EQ(r->new_signed_seq, r->rotated_seq + 2);
  EXPECT_TRUE(r->pub_written);
  EXPECT_TRUE(r->key_installed);
  EXPECT_TRUE(Start().ok());
  VerifyReport report = Verify({&old_});
  EXPECT_TRUE(report.ok) << report.error;
  ASSERT_EQ(report.rotations.size(), 1u);
  EXPECT_EQ(report.rotations[0].new_key_signed, r->rotated_seq + 2);
}

// A crash after the journal's records, before signing.pub (and signing.key) were
// replaced, and one between the two: a start with the folder's old key, or with the new
// key kept outside, is refused and told to run the command again, which finishes.
TEST_F(KeyRotationWindowTest, FilesNotYetReplacedAreFinishedByRunningItAgain) {
  ASSERT_NO_FATAL_FAILURE(Run(old_, 0, 3));
  ASSERT_TRUE(RotateJournalKey(Rotation()).ok());
  // Undo the file steps, as a crash before them leaves the folder.
  ASSERT_TRUE(ReplaceSecretFile(Path(kSigningKeyFile), old_.PrivateKeyPem()).ok());
  ASSERT_TRUE(WriteFileAtomic(env_, Path(kSigningPubFile), old_.PublicKeyPem()).ok());
  const std::string outside = dir_.str() + "/outside.key";
  ASSERT_TRUE(CreateSecretFile(outside, new_.PrivateKeyPem()).ok());
  auto before = Checksums();
  for (const std::string& key_file : {std::string(), outside}) {
    Status s = Start(key_file);
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
    EXPECT_NE(s.message().find("rotate-key"), std::string::npos) << s.ToString();
  }
  EXPECT_EQ(Checksums(), before);

  // signing.pub written, signing.key not yet.
  ASSERT_TRUE(WriteFileAtomic(env_, Path(kSigningPubFile), new_.PublicKeyPem()).ok());
  before = Checksums();
  Status s = Start();
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("rotate-key"), std::string::npos) << s.ToString();
  EXPECT_EQ(Checksums(), before);

  Result<KeyRotationReport> r = RotateJournalKey(Rotation());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->appended);
  EXPECT_EQ(r->new_signed_seq, 0u);
  EXPECT_FALSE(r->pub_written);
  EXPECT_TRUE(r->key_installed);
  EXPECT_TRUE(Start().ok());
}

struct Forgery {
  const char* name;
  // Changes the closed journal of a run with `old` (decisions w0..w5) using the keys a
  // forger holds; `next` is the forger's new key.
  std::function<void(testing::KeyRotationFixture&, const Signer& old, const Signer& next)> apply;
  const char* refusal;  // in the start's message with the new key
};

class KeyRotationForgeryTest : public testing::KeyRotationFixture, public ::testing::WithParamInterface<int> {
 public:
  static const std::vector<Forgery>& Forgeries();
  using KeyRotationFixture::AppendSignedCommit;
  using KeyRotationFixture::Lines;
  using KeyRotationFixture::Rechain;
  using KeyRotationFixture::WriteLines;
};

const std::vector<Forgery>& KeyRotationForgeryTest::Forgeries() {
  static const std::vector<Forgery> forgeries = {
      {"a key replaced without a rotation record",
       [](testing::KeyRotationFixture& f, const Signer&, const Signer& next) {
         auto& t = static_cast<KeyRotationForgeryTest&>(f);
         t.AppendSignedCommit({{RecordKind::kControllerStart, {{"version", "t"}}}}, next);
       },
       "a key change is an explicit, journalled rotation"},
      {"a rotation record signed by its new key, not by the key in force",
       [](testing::KeyRotationFixture& f, const Signer& old, const Signer& next) {
         auto& t = static_cast<KeyRotationForgeryTest&>(f);
         t.AppendSignedCommit({KeyRotatedRecord(old, next, kTestOrigin, "mallory", "")}, next);
       },
       "must sign it first"},
      {"a rotation record from a key that was never in force",
       [](testing::KeyRotationFixture& f, const Signer&, const Signer& next) {
         auto& t = static_cast<KeyRotationForgeryTest&>(f);
         Signer mallory = Signer::Generate().value();
         t.AppendSignedCommit({KeyRotatedRecord(mallory, next, kTestOrigin, "mallory", "")}, mallory);
         t.AppendSignedCommit({}, next);
       },
       "not by the key in force"},
      {"a rotation appended after the journal was re-chained",
       [](testing::KeyRotationFixture& f, const Signer& old, const Signer& next) {
         auto& t = static_cast<KeyRotationForgeryTest&>(f);
         std::vector<std::string> lines = t.Lines();
         size_t at = 0;
         while (at < lines.size() && lines[at].find("\"w2\"") == std::string::npos) ++at;
         ASSERT_LT(at, lines.size());
         lines[at].replace(lines[at].find("\"w2\""), 4, "\"w9\"");
         std::vector<std::string> kept(lines.begin(), lines.begin() + static_cast<long>(at) + 1);
         for (size_t i = at + 1; i < lines.size(); ++i) {
           if (lines[i].find("\"kind\":\"checkpoint\"") == std::string::npos) kept.push_back(lines[i]);
         }
         t.WriteLines(KeyRotationForgeryTest::Rechain(kept, at));
         t.AppendSignedCommit({KeyRotatedRecord(old, next, kTestOrigin, "mallory", "")}, next);
       },
       "must sign it first"},
  };
  return forgeries;
}

TEST_P(KeyRotationForgeryTest, IsRefusedByAStartAndByVerifyWithNoByteChanged) {
  const Forgery& forgery = Forgeries()[static_cast<size_t>(GetParam())];
  SCOPED_TRACE(forgery.name);
  ASSERT_NO_FATAL_FAILURE(Run(old_, 0, 6));
  ASSERT_NO_FATAL_FAILURE(forgery.apply(*this, old_, new_));
  const auto before = Checksums();
  Status with_new = OpenWith(new_);
  EXPECT_EQ(with_new.code(), StatusCode::kFailedPrecondition) << with_new.ToString();
  EXPECT_NE(with_new.message().find(forgery.refusal), std::string::npos) << with_new.ToString();
  EXPECT_NE(with_new.message().find("nothing was changed"), std::string::npos) << with_new.ToString();
  Status with_old = OpenWith(old_);
  EXPECT_FALSE(with_old.ok());
  EXPECT_NE(with_old.message().find("nothing was changed"), std::string::npos) << with_old.ToString();
  EXPECT_EQ(Checksums(), before) << "a refused start changed the journal";
  VerifyReport report = Verify({&old_});
  EXPECT_FALSE(report.ok);
  EXPECT_GT(report.first_bad_seq, 2u);
  // Nor does the forger's key verify the journal from its start.
  EXPECT_FALSE(Verify({&new_}).ok);
}

INSTANTIATE_TEST_SUITE_P(EachForgery, KeyRotationForgeryTest, ::testing::Range(0, 4));

}  // namespace
}  // namespace gpufed::audit
