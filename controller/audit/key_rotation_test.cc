// Key rotation: the key-rotated record, `gpufed audit rotate-key`'s handover signed by both
// keys, a start across a rotation (also in an older segment), verification that follows
// the rotation from the original key only, the checkpoint the API serves, and the lock.
#include <gtest/gtest.h>

#include "controller/audit/audit_trail.h"
#include "controller/audit/file_journal_storage.h"
#include "controller/audit/testing/key_rotation_fixture.h"

namespace gpufed::audit {
namespace {

using testing::kTestOrigin;

class KeyRotationTest : public testing::KeyRotationFixture {};

TEST(KeyRotatedRecordTest, NamesBothKeysAndIsCheckedInItself) {
  Signer a = Signer::Generate().value();
  Signer b = Signer::Generate().value();
  AuditRecord r = KeyRotatedRecord(a, b, kTestOrigin, "alice", "yearly");
  EXPECT_EQ(r.kind, RecordKind::kKeyRotated);
  EXPECT_STREQ(RecordKindName(r.kind), "key-rotated");
  EXPECT_EQ(ParseRecordKind("key-rotated"), RecordKind::kKeyRotated);
  nlohmann::json record = r.payload;
  record["seq"] = uint64_t{7};  // as a parsed record has it
  Result<KeyRotation> parsed = ParseKeyRotation(record, kTestOrigin);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->seq, 7u);
  EXPECT_EQ(parsed->old_key_id, a.key_id());
  EXPECT_EQ(parsed->old_key, a.PublicKeyRaw());
  EXPECT_EQ(parsed->new_key_id, b.key_id());
  EXPECT_EQ(parsed->new_key, b.PublicKeyRaw());
  EXPECT_EQ(parsed->new_vkey, FormatVerifierKey(kTestOrigin, b.PublicKeyRaw()));
  EXPECT_EQ(parsed->operator_name, "alice");
  EXPECT_EQ(parsed->reason, "yearly");
  // Every member must agree with the others: a key and its id, the verifier key and the
  // new key, the log.
  const std::vector<std::pair<const char*, nlohmann::json>> bad = {
      {"newKeyId", a.key_id()},
      {"oldKeyId", b.key_id()},
      {"newVkey", FormatVerifierKey(kTestOrigin, a.PublicKeyRaw())},
      {"newKey", "AAAA"},
      {"oldKey", 7},
  };
  for (const auto& [member, value] : bad) {
    nlohmann::json changed = record;
    changed[member] = value;
    EXPECT_FALSE(ParseKeyRotation(changed, kTestOrigin).ok()) << member;
  }
  EXPECT_FALSE(ParseKeyRotation(record, "gpufed/another-log").ok());
  EXPECT_FALSE(ParseKeyRotation(KeyRotatedRecord(a, a, kTestOrigin, "alice", "").payload, kTestOrigin).ok());
}

TEST_F(KeyRotationTest, TheHandoverIsSignedByBothKeysAndTheNewKeyTakesOver) {
  ASSERT_NO_FATAL_FAILURE(Run(old_, 0, 3));
  Result<KeyRotationReport> r = RotateJournalKey(Rotation());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->appended);
  EXPECT_EQ(r->old_signed_seq, r->rotated_seq + 1);
  EXPECT_EQ(r->new_signed_seq, r->rotated_seq + 2);
  EXPECT_EQ(r->new_vkey, FormatVerifierKey(kTestOrigin, new_.PublicKeyRaw()));
  EXPECT_TRUE(r->pub_written);
  EXPECT_TRUE(r->key_installed);
  // The last three records: the rotation, the old key's checkpoint over it, the new key's
  // over both.
  std::vector<std::string> lines = Lines();
  ASSERT_GE(lines.size(), 3u);
  const nlohmann::json rotated = nlohmann::json::parse(lines[lines.size() - 3]);
  const nlohmann::json by_old = nlohmann::json::parse(lines[lines.size() - 2]);
  const nlohmann::json by_new = nlohmann::json::parse(lines[lines.size() - 1]);
  EXPECT_EQ(rotated["kind"], "key-rotated");
  EXPECT_EQ(rotated["seq"], r->rotated_seq);
  EXPECT_EQ(rotated["operator"], "alice");
  EXPECT_EQ(rotated["reason"], "yearly");
  EXPECT_EQ(by_old["keyId"], old_.key_id());
  EXPECT_EQ(by_old["treeSize"], r->rotated_seq);
  EXPECT_EQ(by_new["keyId"], new_.key_id());
  EXPECT_EQ(by_new["treeSize"], r->rotated_seq + 1);
  // signing.pub is the new public key, signing.key the new private key, 0600.
  EXPECT_EQ(*env_.ReadFile(Path(kSigningPubFile)), new_.PublicKeyPem());
  Result<Signer> installed = Signer::FromPrivateKeyFile(Path(kSigningKeyFile));
  ASSERT_TRUE(installed.ok()) << installed.status().ToString();
  EXPECT_EQ(installed->key_id(), new_.key_id());
  EXPECT_EQ(Mode(Path(kSigningKeyFile)), 0600u);

  // A start with the old key is refused, saying what to do, and changes nothing.
  const auto before = Checksums();
  Status with_old = OpenWith(old_);
  EXPECT_EQ(with_old.code(), StatusCode::kFailedPrecondition) << with_old.ToString();
  EXPECT_NE(with_old.message().find("key in force is " + new_.key_id()), std::string::npos) << with_old.ToString();
  EXPECT_NE(with_old.message().find("rotate-key"), std::string::npos) << with_old.ToString();
  EXPECT_EQ(Checksums(), before);
  // The new key runs the controller on.
  ASSERT_NO_FATAL_FAILURE(Run(new_, 3, 5));
  // Running the command again, now that signing.key is the new key, has nothing left to do.
  const auto after = Checksums();
  KeyRotationOptions again = Rotation();
  again.current = &new_;
  Result<KeyRotationReport> r2 = RotateJournalKey(again);
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_FALSE(r2->appended || r2->pub_written || r2->key_installed);
  EXPECT_EQ(r2->new_signed_seq, 0u);
  EXPECT_EQ(r2->rotated_seq, r->rotated_seq);
  EXPECT_EQ(Checksums(), after);
}

TEST_F(KeyRotationTest, VerifyFollowsTheRotationFromTheOriginalKeyOnly) {
  ASSERT_NO_FATAL_FAILURE(Run(old_, 0, 3));
  Result<KeyRotationReport> r = RotateJournalKey(Rotation());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // A rotation of a closed journal leaves it closed.
  EXPECT_FALSE(Verify({&old_}).unclosed);
  ASSERT_NO_FATAL_FAILURE(Run(new_, 3, 5));

  VerifyReport from_old = Verify({&old_});
  EXPECT_TRUE(from_old.ok) << from_old.error;
  EXPECT_FALSE(from_old.unclosed);
  EXPECT_EQ(from_old.signatures_verified, from_old.checkpoints);
  ASSERT_EQ(from_old.rotations.size(), 1u);
  const VerifyReport::Rotation& rotation = from_old.rotations[0];
  EXPECT_EQ(rotation.seq, r->rotated_seq);
  EXPECT_EQ(rotation.old_key_id, old_.key_id());
  EXPECT_EQ(rotation.new_key_id, new_.key_id());
  EXPECT_EQ(rotation.old_key_signed, r->rotated_seq + 1);
  EXPECT_EQ(rotation.new_key_signed, r->rotated_seq + 2);
  EXPECT_EQ(rotation.operator_name, "alice");
  EXPECT_EQ(rotation.reason, "yearly");
  EXPECT_EQ(from_old.last_note_key_id, new_.key_id());

  // The new key alone: it was not in force at the start, so the first checkpoint fails.
  VerifyReport from_new = Verify({&new_});
  EXPECT_FALSE(from_new.ok);
  EXPECT_EQ(from_new.first_bad_seq, 2u);  // controller-start's checkpoint
  EXPECT_NE(from_new.error.find(old_.key_id()), std::string::npos) << from_new.error;
  EXPECT_NE(from_new.error.find("original key"), std::string::npos) << from_new.error;

  // More keys pin the rotations: the journal's new key among them passes, another fails
  // at the record; a given key never put in force is reported.
  Signer other = Signer::Generate().value();
  VerifyReport pinned = Verify({&old_, &new_, &other});
  EXPECT_TRUE(pinned.ok) << pinned.error;
  EXPECT_EQ(pinned.keys_never_in_force, std::vector<std::string>{other.key_id()});
  VerifyReport wrong_pin = Verify({&old_, &other});
  EXPECT_FALSE(wrong_pin.ok);
  EXPECT_EQ(wrong_pin.first_bad_seq, r->rotated_seq);
  EXPECT_NE(wrong_pin.error.find(new_.key_id()), std::string::npos) << wrong_pin.error;

  // Without a key the rotation is reported as the journal claims it.
  VerifyReport unchecked = Verify({});
  EXPECT_TRUE(unchecked.ok) << unchecked.error;
  ASSERT_EQ(unchecked.rotations.size(), 1u);
  EXPECT_EQ(unchecked.rotations[0].new_key_signed, r->rotated_seq + 2);
}

// The tlog-tiles checkpoint /v1/audit/log/checkpoint serves after a rotation is the new
// key's, and a controller's start (AuditTrail) opens with the installed key.
TEST_F(KeyRotationTest, TheServedCheckpointIsSignedByTheKeyInForce) {
  ASSERT_NO_FATAL_FAILURE(Run(old_, 0, 2));
  Result<KeyRotationReport> r = RotateJournalKey(Rotation());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  AuditTrailOptions options;
  options.dir = dir_.str();
  options.env = &env_;
  Result<std::unique_ptr<AuditTrail>> trail = AuditTrail::Open(options);
  ASSERT_TRUE(trail.ok()) << trail.status().ToString();
  EXPECT_EQ((*trail)->key_id(), new_.key_id());
  Result<std::string> served = (*trail)->log().Checkpoint();
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  Result<Note> note = ParseNote(*served);
  ASSERT_TRUE(note.ok());
  EXPECT_TRUE(NoteVerifier::FromVerifierKey(r->new_vkey)->Verify(*note).ok());
  const std::string old_vkey = FormatVerifierKey(kTestOrigin, old_.PublicKeyRaw());
  EXPECT_FALSE(NoteVerifier::FromVerifierKey(old_vkey)->Verify(*note).ok());
}

TEST_F(KeyRotationTest, ARunningControllerHoldsTheLockAndNothingChanges) {
  ASSERT_NO_FATAL_FAILURE(Run(old_, 0, 2));
  auto running = AuditJournal::Open(Options(&old_));
  ASSERT_TRUE(running.ok());
  const auto before = Checksums();
  Result<KeyRotationReport> r = RotateJournalKey(Rotation());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << r.status().ToString();
  EXPECT_NE(r.status().message().find("stop the controller"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(Checksums(), before);
}

// With small segments the rotation's records begin a segment (the start checks the
// rotation before the first checkpoint of the last segment), then lie in older segments
// (the start checks only the new key's checkpoints).
TEST_F(KeyRotationTest, AStartFindsTheKeyInForceAcrossSegments) {
  segment_bytes_ = 600;  // about one commit a segment
  ASSERT_NO_FATAL_FAILURE(Run(old_, 0, 3));
  ASSERT_NO_FATAL_FAILURE(AppendRotationRecord());
  ASSERT_GT(ListSegments(env_, dir_.str() + "/journal")->size(), 3u);
  {
    // rotate-key's own open: the rotation is the last segment's first record.
    auto j = AuditJournal::Open(Options(&new_, &old_));
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    ASSERT_TRUE((*j)->Countersign().ok());
    ASSERT_TRUE((*j)->Close().ok());
  }
  ASSERT_NO_FATAL_FAILURE(Run(new_, 3, 6));
  EXPECT_TRUE(OpenWith(new_).ok());
  Status with_old = OpenWith(old_);
  EXPECT_EQ(with_old.code(), StatusCode::kFailedPrecondition) << with_old.ToString();
  EXPECT_NE(with_old.message().find("rotate-key"), std::string::npos) << with_old.ToString();
  VerifyReport report = Verify({&old_});
  EXPECT_TRUE(report.ok) << report.error;
  EXPECT_EQ(report.rotations.size(), 1u);
}

}  // namespace
}  // namespace gpufed::audit
