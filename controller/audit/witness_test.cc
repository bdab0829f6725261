// The witness protocol end to end in one process: a log's journal, a witness that keeps
// its state on disk, cosignatures checked by `verify --require-witnessed`'s check, and a
// history rewritten with the log's own key caught by the witness.
#include <gtest/gtest.h>

#include <filesystem>

#include "controller/audit/cosignature.h"
#include "controller/audit/journal.h"
#include "controller/audit/log_view.h"
#include "controller/audit/proofs.h"
#include "controller/audit/verify.h"
#include "controller/audit/witness.h"
#include "controller/audit/witness_client.h"
#include "controller/audit/witness_protocol.h"
#include "controller/audit/witnessed_check.h"
#include "tests/testutil/temp_dir.h"

namespace gpufed::audit {
namespace {

constexpr char kOrigin[] = "gpufed/test-log";

AuditRecord Decision(int i) { return {RecordKind::kDecision, {{"workload", "w" + std::to_string(i)}}}; }

class WitnessTest : public ::testing::Test {
 protected:
  // A journal of the decisions `ids` in <root>/<name>, signed by the log key; its newest
  // checkpoint note.
  std::string WriteJournal(const std::string& name, const std::vector<int>& ids) {
    JournalOptions o;
    o.env = env_.get();
    o.dir = dir_.str() + "/" + name;
    o.signer = &log_key_;
    o.log_origin = kOrigin;
    auto j = AuditJournal::Open(o);
    EXPECT_TRUE(j.ok()) << j.status().ToString();
    for (int i : ids) EXPECT_TRUE((*j)->Append(Decision(i)).ok());
    std::string note = (*j)->last_checkpoint().note;
    EXPECT_TRUE((*j)->Close().ok());
    return note;
  }
  std::unique_ptr<Witness> OpenWitness() {
    WitnessOptions o{.env = env_.get(),
                     .state_dir = dir_.str() + "/witness",
                     .signer = &cosigner_,
                     .log_vkeys = {LogVerifier().VerifierKey()},
                     .now_seconds = [] { return uint64_t{1'800'000'000}; }};
    auto w = Witness::Open(o);
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    return w.ok() ? std::move(w).value() : nullptr;
  }
  NoteVerifier LogVerifier() {
    return NoteVerifier::FromPublicKey(kOrigin, SignatureVerifier::FromPublicKeyPem(log_key_.PublicKeyPem()).value())
        .value();
  }
  // What a log sends: `note` with a proof from `old_size` over the journal in `name`.
  std::string Request(const std::string& name, const std::string& note, uint64_t old_size) {
    AddCheckpointRequest r{.old_size = old_size, .checkpoint = note};
    Result<LogCheckpoint> body = ParseCheckpointBody(ParseNote(note)->body);
    if (old_size > 0 && old_size < body->size) {
      Result<JournalProver> prover = JournalProver::Load(*env_, dir_.str() + "/" + name);
      EXPECT_TRUE(prover.ok()) << prover.status().ToString();
      nlohmann::json proof = prover->Consistency(old_size, body->size).value();
      for (const auto& h : proof["proof"]) r.proof.push_back(MerkleHashFromBase64(h.get<std::string>()).value());
    }
    return EncodeAddCheckpoint(r);
  }
  static uint64_t Size(const std::string& note) { return ParseCheckpointBody(ParseNote(note)->body)->size; }

  std::unique_ptr<Env> env_ = NewPosixEnv();
  testutil::TempDir dir_;
  Signer log_key_ = Signer::Generate().value();
  Signer witness_key_ = Signer::Generate().value();
  CosignatureSigner cosigner_ = CosignatureSigner::Create("witness-1.example", &witness_key_).value();
};

TEST_F(WitnessTest, CosignatureVerifiesOnlyOverItsCheckpointAndWithItsKey) {
  const std::string body = "gpufed/test-log\n3\n" + MerkleHashBase64(MerkleHasher().Leaf("x")) + "\n";
  Note note{.body = body, .signatures = {cosigner_.Sign(body, 1'700'000'000)}};
  CosignatureVerifier verifier = CosignatureVerifier::FromVerifierKey(cosigner_.VerifierKey()).value();
  Result<uint64_t> t = verifier.Verify(*ParseNote(FormatNote(note)));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(*t, 1'700'000'000u);
  // The signed message is the C2SP one: a verifier of the spec needs nothing else.
  EXPECT_TRUE(SignatureVerifier::FromPublicKeyRaw(witness_key_.PublicKeyRaw())
                  ->VerifyRaw("cosignature/v1\ntime 1700000000\n" + body,
                              std::string_view(note.signatures[0].signature).substr(8)));
  Note changed = note;
  changed.body[changed.body.find('3')] = '4';
  EXPECT_EQ(verifier.Verify(changed).status().code(), StatusCode::kDataLoss);
  Signer other = Signer::Generate().value();
  CosignatureVerifier stranger =
      CosignatureVerifier::FromVerifierKey(CosignatureSigner::Create("witness-1.example", &other)->VerifierKey())
          .value();
  EXPECT_EQ(stranger.Verify(note).status().code(), StatusCode::kNotFound);  // another key id
  // A log's key (type 0x01) is not a witness's key, and the other way round.
  EXPECT_FALSE(CosignatureVerifier::FromVerifierKey(LogVerifier().VerifierKey()).ok());
  EXPECT_FALSE(NoteVerifier::FromVerifierKey(cosigner_.VerifierKey()).ok());
}

TEST_F(WitnessTest, RequestBodiesParseAndMalformedOnesAreRefused) {
  AddCheckpointRequest r{.old_size = 7,
                         .proof = {MerkleHasher().Leaf("a"), MerkleHasher().Leaf("b")},
                         .checkpoint = "o\n1\nAAAA\n\n— o AAAA\n"};
  Result<AddCheckpointRequest> back = ParseAddCheckpoint(EncodeAddCheckpoint(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->old_size, 7u);
  EXPECT_EQ(back->proof, r.proof);
  EXPECT_EQ(back->checkpoint, r.checkpoint);
  for (const std::string& bad :
       std::vector<std::string>{"", "old\n\nx", "old 07\n\nx", "old -1\n\nx", "new 1\n\nx", "old 1\nnot base64\n\nx",
                                "old 1\n" + MerkleHashBase64(MerkleHasher().Leaf("a")) + "\n", "old 1\n\n",
                                "old 99999999999999999999999\n\nx"}) {
    EXPECT_FALSE(ParseAddCheckpoint(bad).ok()) << bad;
  }
  std::string long_proof = "old 1\n";
  for (int i = 0; i < 129; ++i) long_proof += MerkleHashBase64(MerkleHasher().Leaf("a")) + "\n";
  EXPECT_FALSE(ParseAddCheckpoint(long_proof + "\nx").ok());
  EXPECT_FALSE(ParseAddCheckpoint("old 1\n\n" + std::string(kMaxAddCheckpointBytes, 'x')).ok());
  EXPECT_EQ(ParseTlogSize("42\n").value(), 42u);
  EXPECT_FALSE(ParseTlogSize("4 2\n").ok());
}

TEST_F(WitnessTest, WitnessAnswersAsTheProtocolSaysAndRemembersAcrossRestarts) {
  std::vector<int> ids(40);
  for (int i = 0; i < 40; ++i) ids[i] = i;
  const std::string first = WriteJournal("log", {ids.begin(), ids.begin() + 10});
  std::unique_ptr<Witness> witness = OpenWitness();
  ASSERT_NE(witness, nullptr);
  // The first checkpoint a witness sees: old 0, no proof.
  WitnessAnswer a = witness->AddCheckpoint(Request("log", first, 0));
  ASSERT_EQ(a.http_status, 200) << a.body;
  Note cosigned = *ParseNote(first);
  Result<Note> lines = ParseNote(ParseNote(first)->body + "\n" + a.body);
  ASSERT_TRUE(lines.ok()) << a.body;
  cosigned.signatures.push_back(lines->signatures[0]);
  EXPECT_TRUE(CosignatureVerifier::FromVerifierKey(cosigner_.VerifierKey())->Verify(cosigned).ok());
  EXPECT_EQ(witness->CosignedSize(kOrigin), Size(first));

  // The log grows (a second process appends to the same journal).
  JournalOptions o;
  o.env = env_.get();
  o.dir = dir_.str() + "/log";
  o.signer = &log_key_;
  o.log_origin = kOrigin;
  {
    auto j = AuditJournal::Open(o);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    for (int i = 10; i < 40; ++i) ASSERT_TRUE((*j)->Append(Decision(i)).ok());
    ASSERT_TRUE((*j)->Close().ok());
  }
  Result<JournalProver> prover = JournalProver::Load(*env_, o.dir);
  const std::string second = std::string((*prover->Inclusion(1, 0, ""))["checkpoint"]);
  ASSERT_GT(Size(second), Size(first));

  // A stale old size: 409 with the size the witness holds, as text/x.tlog.size.
  a = witness->AddCheckpoint(Request("log", second, 3));
  EXPECT_EQ(a.http_status, 409);
  EXPECT_EQ(a.content_type, kTlogSizeContentType);
  EXPECT_EQ(ParseTlogSize(a.body).value(), Size(first));
  // A proof that does not show consistency: 422.
  std::string bad = Request("log", second, Size(first));
  bad[bad.find('\n') + 3] ^= 1;
  a = witness->AddCheckpoint(bad);
  EXPECT_TRUE(a.http_status == 422 || a.http_status == 400) << a.http_status << " " << a.body;
  // Old size above the checkpoint's: 400; another log's origin: 404; another key: 403.
  EXPECT_EQ(witness->AddCheckpoint(Request("log", first, Size(second))).http_status, 400);
  Signer stranger = Signer::Generate().value();
  NoteSigner other_origin = NoteSigner::Create("gpufed/other", &log_key_).value();
  NoteSigner other_key = NoteSigner::Create(kOrigin, &stranger).value();
  const std::string body = ParseNote(second)->body;
  const std::string other_body = "gpufed/other\n1\n" + MerkleHashBase64(MerkleHasher().Leaf("x")) + "\n";
  EXPECT_EQ(witness
                ->AddCheckpoint(EncodeAddCheckpoint(
                    {.old_size = 0, .checkpoint = FormatNote({other_body, {other_origin.Sign(other_body)}})}))
                .http_status,
            404);
  EXPECT_EQ(witness
                ->AddCheckpoint(EncodeAddCheckpoint(
                    {.old_size = Size(first), .checkpoint = FormatNote({body, {other_key.Sign(body)}})}))
                .http_status,
            403);
  // Nothing refused changed what it holds; the good request is cosigned.
  EXPECT_EQ(witness->CosignedSize(kOrigin), Size(first));
  a = witness->AddCheckpoint(Request("log", second, Size(first)));
  ASSERT_EQ(a.http_status, 200) << a.body;
  EXPECT_EQ(witness->CosignedSize(kOrigin), Size(second));
  // A second witness process cannot take the same state folder.
  WitnessOptions again{.env = env_.get(),
                       .state_dir = dir_.str() + "/witness",
                       .signer = &cosigner_,
                       .log_vkeys = {LogVerifier().VerifierKey()}};
  EXPECT_EQ(Witness::Open(again).status().code(), StatusCode::kFailedPrecondition);
  // After a restart it still holds the newest size: an older checkpoint is refused.
  witness.reset();
  witness = OpenWitness();
  ASSERT_NE(witness, nullptr);
  EXPECT_EQ(witness->CosignedSize(kOrigin), Size(second));
  EXPECT_EQ(witness->AddCheckpoint(Request("log", first, Size(first))).http_status, 409);
}

TEST_F(WitnessTest, HistoryRewrittenWithTheLogKeyPassesVerifyButNotTheWitness) {
  std::vector<int> all(30);
  for (int i = 0; i < 30; ++i) all[i] = i;
  const std::string note = WriteJournal("log", all);
  std::unique_ptr<Witness> witness = OpenWitness();
  WitnessAnswer a = witness->AddCheckpoint(Request("log", note, 0));
  ASSERT_EQ(a.http_status, 200) << a.body;
  // The controller keeps the cosigned checkpoint beside its journal.
  Note cosigned = *ParseNote(note);
  cosigned.signatures.push_back(ParseNote(cosigned.body + "\n" + a.body)->signatures[0]);
  const std::string kept = WitnessedNotePath(dir_.str() + "/log", cosigner_.name());
  std::filesystem::create_directories(std::filesystem::path(kept).parent_path());
  ASSERT_TRUE(WriteFileAtomic(*env_, kept, FormatNote(cosigned)).ok());

  WitnessPolicy policy;
  policy.witnesses.push_back(CosignatureVerifier::FromVerifierKey(cosigner_.VerifierKey()).value());
  policy.quorum = 1;
  NoteVerifier log = LogVerifier();
  {
    JournalProver prover = JournalProver::Load(*env_, dir_.str() + "/log").value();
    Result<WitnessedReport> honest = CheckWitnessed(*env_, dir_.str() + "/log", log, policy, prover);
    ASSERT_TRUE(honest.ok()) << honest.status().ToString();
    EXPECT_FALSE(honest->mismatch);
    EXPECT_EQ(honest->witnessed_size, Size(note));
  }

  // Root on the controller host, with the log's key: drop decision 12, re-chain, re-sign
  // (a journal written afresh from the remaining records is exactly that forgery), and
  // keep the cosigned checkpoint beside it.
  std::vector<int> forged_ids;
  for (int i : all) {
    if (i != 12) forged_ids.push_back(i);
  }
  forged_ids.push_back(30);  // and carry on, so the forged tree is not smaller
  forged_ids.push_back(31);
  const std::string forged = WriteJournal("forged", forged_ids);
  std::filesystem::create_directories(dir_.str() + "/forged/witnessed");
  std::filesystem::copy_file(kept, WitnessedNotePath(dir_.str() + "/forged", cosigner_.name()));
  SignatureVerifier pub = SignatureVerifier::FromPublicKeyPem(log_key_.PublicKeyPem()).value();
  Result<VerifyReport> report = VerifyJournalDir(*env_, dir_.str() + "/forged", {&pub, false, {}});
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok) << report->error;  // the chain and every signature hold: verify alone passes it

  // The witness that cosigned the real history refuses the forged one...
  a = witness->AddCheckpoint(Request("forged", forged, Size(note)));
  EXPECT_EQ(a.http_status, 422) << a.body;
  EXPECT_EQ(witness->CosignedSize(kOrigin), Size(note));
  // ...and the cosignature kept beside the forged journal does not match it.
  JournalProver prover = JournalProver::Load(*env_, dir_.str() + "/forged").value();
  Result<WitnessedReport> checked = CheckWitnessed(*env_, dir_.str() + "/forged", log, policy, prover);
  ASSERT_TRUE(checked.ok());
  EXPECT_TRUE(checked->mismatch);
  EXPECT_EQ(checked->witnessed_size, 0u);
}

TEST_F(WitnessTest, QuorumCountsWitnessesThatCosignedAtLeastTheSize) {
  std::vector<int> ids(12);
  for (int i = 0; i < 12; ++i) ids[i] = i;
  const std::string note = WriteJournal("log", ids);
  std::unique_ptr<Witness> witness = OpenWitness();
  WitnessAnswer a = witness->AddCheckpoint(Request("log", note, 0));
  ASSERT_EQ(a.http_status, 200);
  Note cosigned = *ParseNote(note);
  cosigned.signatures.push_back(ParseNote(cosigned.body + "\n" + a.body)->signatures[0]);
  const std::string kept = WitnessedNotePath(dir_.str() + "/log", cosigner_.name());
  std::filesystem::create_directories(std::filesystem::path(kept).parent_path());
  ASSERT_TRUE(WriteFileAtomic(*env_, kept, FormatNote(cosigned)).ok());
  Signer second_key = Signer::Generate().value();
  CosignatureSigner second = CosignatureSigner::Create("witness-2.example", &second_key).value();
  WitnessPolicy policy;
  policy.witnesses.push_back(CosignatureVerifier::FromVerifierKey(cosigner_.VerifierKey()).value());
  policy.witnesses.push_back(CosignatureVerifier::FromVerifierKey(second.VerifierKey()).value());
  JournalProver prover = JournalProver::Load(*env_, dir_.str() + "/log").value();
  policy.quorum = 1;
  EXPECT_EQ(CheckWitnessed(*env_, dir_.str() + "/log", LogVerifier(), policy, prover)->witnessed_size, Size(note));
  policy.quorum = 2;  // the second never cosigned
  EXPECT_EQ(CheckWitnessed(*env_, dir_.str() + "/log", LogVerifier(), policy, prover)->witnessed_size, 0u);
}

TEST_F(WitnessTest, TheServedCheckpointCarriesTheCosignaturesOfThatVeryCheckpoint) {
  JournalOptions o;
  o.env = env_.get();
  o.dir = dir_.str() + "/served";
  o.signer = &log_key_;
  o.log_origin = kOrigin;
  auto journal = AuditJournal::Open(o);
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE((*journal)->Append(Decision(i)).ok());
  const std::string note = (*journal)->last_checkpoint().note;
  LogView view(env_.get(), o.dir, journal->get(), nullptr, Status::Ok());
  EXPECT_EQ(view.Checkpoint().value(), note) << "no witness yet: the log's signature alone";

  std::unique_ptr<Witness> witness = OpenWitness();
  WitnessAnswer a = witness->AddCheckpoint(Request("served", note, 0));
  ASSERT_EQ(a.http_status, 200) << a.body;
  Note cosigned = *ParseNote(note);
  cosigned.signatures.push_back(ParseNote(cosigned.body + "\n" + a.body)->signatures[0]);
  const std::string kept = WitnessedNotePath(o.dir, cosigner_.name());
  std::filesystem::create_directories(std::filesystem::path(kept).parent_path());
  ASSERT_TRUE(WriteFileAtomic(*env_, kept, FormatNote(cosigned)).ok());
  // Noise a verifier must not be handed as a cosignature: a file that is not a note.
  ASSERT_TRUE(WriteFileAtomic(*env_, o.dir + "/witnessed/junk.note", "not a note").ok());

  Result<std::string> served = view.Checkpoint();
  ASSERT_TRUE(served.ok());
  Result<Note> parsed = ParseNote(*served);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->signatures.size(), 2u);
  EXPECT_TRUE(LogVerifier().Verify(*parsed).ok());
  EXPECT_TRUE(CosignatureVerifier::FromVerifierKey(cosigner_.VerifierKey())->Verify(*parsed).ok());

  // A newer checkpoint the witness has not cosigned yet is served with the log's
  // signature only: a cosignature of another tree would not verify over it.
  ASSERT_TRUE((*journal)->Append(Decision(99)).ok());
  Result<Note> newer = ParseNote(view.Checkpoint().value());
  ASSERT_TRUE(newer.ok());
  EXPECT_EQ(newer->signatures.size(), 1u);
  EXPECT_TRUE((*journal)->Close().ok());
}

}  // namespace
}  // namespace gpufed::audit
