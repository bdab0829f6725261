#include "controller/audit/proofs.h"

#include <gtest/gtest.h>

#include "controller/audit/journal.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

class ProofsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    JournalOptions o;
    o.env = env_.get();
    o.dir = dir_.str();
    o.signer = &signer_;
    auto j = AuditJournal::Open(o);
    ASSERT_TRUE(j.ok());
    for (int i = 0; i < 120; ++i) {
      ASSERT_TRUE((*j)->Append({RecordKind::kDecision, {{"workload", "w" + std::to_string(i)}}}).ok());
    }
    ASSERT_TRUE((*j)->Close().ok());
  }
  std::unique_ptr<Env> env_ = NewPosixEnv();
  testutil::TempDir dir_;
  Signer signer_ = Signer::Generate().value();
  SignatureVerifier public_key_ = SignatureVerifier::FromPublicKeyPem(signer_.PublicKeyPem()).value();
};

TEST_F(ProofsTest, EveryRecordsInclusionProofVerifiesWithThePublicKeyAlone) {
  Result<JournalProver> prover = JournalProver::Load(*env_, dir_.str());
  ASSERT_TRUE(prover.ok()) << prover.status().ToString();
  EXPECT_EQ(prover->size(), 240u);  // each record and its checkpoint
  ProofKey key{std::nullopt, &public_key_};
  for (uint64_t seq = 1; seq <= prover->size(); seq += 7) {
    Result<nlohmann::json> proof = prover->Inclusion(seq, 0, "");
    ASSERT_TRUE(proof.ok()) << proof.status().ToString();
    // Round-trip through text, as an auditor receives it.
    nlohmann::json received = nlohmann::json::parse((*proof).dump());
    Result<ProofCheck> check = VerifyProof(received, key, "", "");
    ASSERT_TRUE(check.ok()) << seq << ": " << check.status().ToString();

    nlohmann::json changed = received;
    std::string record = changed["record"];
    record[record.size() / 2] ^= 1;
    changed["record"] = record;
    EXPECT_FALSE(VerifyProof(changed, key, "", "").ok());
    nlohmann::json bad_note = received;
    std::string note = bad_note["checkpoint"];
    note[note.find('\n') + 1] = note[note.find('\n') + 1] == '9' ? '8' : '9';  // the tree size
    bad_note["checkpoint"] = note;
    EXPECT_FALSE(VerifyProof(bad_note, key, "", "").ok());
  }
  // Another key trusts nothing.
  Signer other = Signer::Generate().value();
  SignatureVerifier other_key = SignatureVerifier::FromPublicKeyPem(other.PublicKeyPem()).value();
  Result<nlohmann::json> proof = prover->Inclusion(5, 0, "");
  EXPECT_FALSE(VerifyProof(*proof, ProofKey{std::nullopt, &other_key}, "", "").ok());
}

TEST_F(ProofsTest, ConsistencyBetweenTwoSignedCheckpointsVerifies) {
  Result<JournalProver> prover = JournalProver::Load(*env_, dir_.str());
  ASSERT_TRUE(prover.ok());
  Result<nlohmann::json> old_proof = prover->Inclusion(10, 11, "");  // the checkpoint after seq 11 signs 11
  ASSERT_TRUE(old_proof.ok()) << old_proof.status().ToString();
  const std::string old_note = (*old_proof)["checkpoint"];
  Result<nlohmann::json> proof = prover->Consistency(11, 0);
  ASSERT_TRUE(proof.ok()) << proof.status().ToString();
  EXPECT_EQ((*proof)["toSize"], 239u);
  ProofKey key{std::nullopt, &public_key_};
  Result<ProofCheck> check = VerifyProof(*proof, key, "", old_note);
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  // An old checkpoint of another size does not match the proof's old tree.
  Result<nlohmann::json> other_old = prover->Inclusion(10, 13, "");
  EXPECT_FALSE(VerifyProof(*proof, key, "", (*other_old)["checkpoint"]).ok());
  nlohmann::json bad = *proof;
  bad["proof"][0] = MerkleHashBase64(MerkleHasher().Leaf("x"));
  EXPECT_FALSE(VerifyProof(bad, key, "", old_note).ok());
}

TEST_F(ProofsTest, MalformedProofsAreRefusedWithAReason) {
  ProofKey key{std::nullopt, &public_key_};
  EXPECT_EQ(VerifyProof(nlohmann::json::array(), key, "", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(VerifyProof({{"type", "inclusion"}}, key, "", "").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(VerifyProof({{"type", "other"}, {"proof", nlohmann::json::array()}}, key, "", "").status().code(),
            StatusCode::kInvalidArgument);
  Result<JournalProver> prover = JournalProver::Load(*env_, dir_.str());
  EXPECT_FALSE(prover->Inclusion(0, 0, "").ok());
  EXPECT_FALSE(prover->Inclusion(241, 0, "").ok());
  EXPECT_FALSE(prover->Consistency(0, 10).ok());
}

}  // namespace
}  // namespace gpufed::audit
