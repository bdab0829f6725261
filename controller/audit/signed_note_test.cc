#include "controller/audit/signed_note.h"

#include <gtest/gtest.h>

namespace gpufed::audit {
namespace {

LogCheckpoint Example(MerkleHasher& hasher) { return {"gpufed.example/c1", 42, hasher.Leaf("x"), {}}; }

TEST(SignedNoteTest, ASignedCheckpointRoundTripsAndVerifies) {
  Result<Signer> key = Signer::Generate();
  ASSERT_TRUE(key.ok());
  Result<NoteSigner> signer = NoteSigner::Create("gpufed.example/c1", &*key);
  ASSERT_TRUE(signer.ok());
  MerkleHasher hasher;
  Note note{CheckpointBody(Example(hasher)), {}};
  note.signatures.push_back(signer->Sign(note.body));
  const std::string text = FormatNote(note);
  EXPECT_NE(text.find("\n\n\xe2\x80\x94 gpufed.example/c1 "), std::string::npos) << text;

  Result<Note> parsed = ParseNote(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(FormatNote(*parsed), text);
  Result<LogCheckpoint> body = ParseCheckpointBody(parsed->body);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(body->size, 42u);
  EXPECT_EQ(body->root, hasher.Leaf("x"));

  Result<NoteVerifier> verifier = NoteVerifier::FromVerifierKey(signer->VerifierKey());
  ASSERT_TRUE(verifier.ok()) << verifier.status().message();
  EXPECT_TRUE(verifier->Verify(*parsed).ok());
  EXPECT_EQ(verifier->key_id(), signer->key_id());

  // A changed body, another key, or a missing signature fail.
  Note changed = *parsed;
  changed.body[changed.body.size() - 3] ^= 1;
  EXPECT_FALSE(verifier->Verify(changed).ok());
  Result<Signer> other = Signer::Generate();
  Result<NoteVerifier> other_verifier =
      NoteVerifier::FromVerifierKey(NoteSigner::Create("gpufed.example/c1", &*other)->VerifierKey());
  EXPECT_FALSE(other_verifier->Verify(*parsed).ok());
  Note unsigned_note{parsed->body, {}};
  EXPECT_FALSE(verifier->Verify(unsigned_note).ok());
}

TEST(SignedNoteTest, TheKeyIdFollowsTheSpec) {
  // A known signed-note verifier key (name, id and key are bound by the key id).
  Result<NoteVerifier> v =
      NoteVerifier::FromVerifierKey("PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->key_id(), 0xc74f20a3u);
  EXPECT_FALSE(
      NoteVerifier::FromVerifierKey("PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW").ok());
  EXPECT_FALSE(
      NoteVerifier::FromVerifierKey("Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW").ok());
  EXPECT_FALSE(NoteVerifier::FromVerifierKey("nokey").ok());
}

TEST(SignedNoteTest, MalformedNotesAndCheckpointsAreRefused) {
  EXPECT_FALSE(ParseNote("origin\n1\nroot\n").ok());           // no signatures
  EXPECT_FALSE(ParseNote("origin\n\n- name AAAAAAAA\n").ok());  // not an em dash
  EXPECT_FALSE(ParseNote("origin\n\n\xe2\x80\x94 name !!!\n").ok());
  EXPECT_FALSE(ParseNote(std::string(kMaxNoteBytes + 1, 'a')).ok());
  EXPECT_FALSE(ParseCheckpointBody("origin\n01\nAAAA\n").ok());
  EXPECT_FALSE(ParseCheckpointBody("origin\n1\nnot-base64\n").ok());
  EXPECT_FALSE(ParseCheckpointBody("\n1\n" + std::string(44, 'A') + "\n").ok());
  EXPECT_FALSE(NoteSigner::Create("has space", nullptr).ok());
  EXPECT_FALSE(NoteSigner::Create("a+b", nullptr).ok());
}

}  // namespace
}  // namespace gpufed::audit
